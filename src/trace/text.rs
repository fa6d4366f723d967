//! Formatting into a reused byte buffer, without `core::fmt`: the text trace writes millions
//! of lines, and `write!` costs several times the simulation itself (issue 12).

/// Append `v` in decimal.
#[inline]
pub fn uint(out: &mut Vec<u8>, v: u64) {
    out.extend_from_slice(itoa::Buffer::new().format(v).as_bytes());
}

/// Append `v` in decimal, with a minus sign when negative.
#[inline]
pub fn int(out: &mut Vec<u8>, v: i64) {
    out.extend_from_slice(itoa::Buffer::new().format(v).as_bytes());
}

/// Append `v` in decimal, zero-padded to `width` digits (`%0Nd`).
pub fn uint_zero_padded(out: &mut Vec<u8>, v: u64, width: usize) {
    let mut buf = itoa::Buffer::new();
    let digits = buf.format(v).as_bytes();
    out.resize(out.len() + width.saturating_sub(digits.len()), b'0');
    out.extend_from_slice(digits);
}

/// "00" to "99".
const PAIRS: &[u8; 200] = b"0001020304050607080910111213141516171819\
      2021222324252627282930313233343536373839\
      4041424344454647484950515253545556575859\
      6061626364656667686970717273747576777879\
      8081828384858687888990919293949596979899";

/// Write `v` (below 10⁹) as exactly nine digits into `out` (nine bytes): the nanoseconds of
/// a timestamp.
#[inline]
pub fn nine_digits(out: &mut [u8], v: u64) {
    debug_assert!(v < 1_000_000_000);
    let digits: &mut [u8; 9] = out.try_into().expect("nine bytes");
    let mut v = v as u32;
    for i in (0..4).rev() {
        let pair = (v % 100) as usize * 2;
        digits[1 + 2 * i..3 + 2 * i].copy_from_slice(&PAIRS[pair..pair + 2]);
        v /= 100;
    }
    digits[0] = b'0' + v as u8;
}

/// Append `s` right-aligned in `width` characters (`{:>width}`).
pub fn right(out: &mut Vec<u8>, s: &str, width: usize) {
    pad(out, width.saturating_sub(chars(s)));
    out.extend_from_slice(s.as_bytes());
}

/// Append `v` left-aligned in `width` characters (`{:<width}`).
pub fn uint_left(out: &mut Vec<u8>, v: u64, width: usize) {
    let start = out.len();
    uint(out, v);
    pad(out, width.saturating_sub(out.len() - start));
}

fn pad(out: &mut Vec<u8>, n: usize) {
    out.resize(out.len() + n, b' ');
}

/// Characters in `s`, as `core::fmt` counts them for padding.
fn chars(s: &str) -> usize {
    if s.is_ascii() {
        s.len()
    } else {
        s.chars().count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every helper prints what `core::fmt` prints for the same value and spec.
    #[test]
    fn helpers_match_core_fmt() {
        let values = [0u64, 1, 9, 10, 99, 100, 12345, 999_999_999, u64::MAX];
        for &v in &values {
            let mut b = Vec::new();
            uint(&mut b, v);
            assert_eq!(b, v.to_string().into_bytes());
            let mut b = Vec::new();
            uint_zero_padded(&mut b, v, 9);
            assert_eq!(b, format!("{v:09}").into_bytes());
            if v < 1_000_000_000 {
                let mut b = [0; 9];
                nine_digits(&mut b, v);
                assert_eq!(b.to_vec(), format!("{v:09}").into_bytes());
            }
            let mut b = Vec::new();
            uint_left(&mut b, v, 5);
            assert_eq!(b, format!("{v:<5}").into_bytes());
        }
        for v in [0i64, -1, 7, -120, i64::MIN, i64::MAX] {
            let mut b = Vec::new();
            int(&mut b, v);
            assert_eq!(b, v.to_string().into_bytes());
        }
        for s in ["", "<idle>", "thread0-0", "a-very-long-comm-name", "tâche"] {
            let mut b = Vec::new();
            right(&mut b, s, 16);
            assert_eq!(b, format!("{s:>16}").into_bytes());
        }
    }
}

/// A CPU mask in the kernel's `%*pb` hex form.
pub fn hex_mask(out: &mut Vec<u8>, m: &crate::workload::CpuSet) {
    use std::io::Write;
    let _ = write!(out, "{m:x}");
}
