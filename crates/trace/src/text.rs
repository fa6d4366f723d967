//! Formatting into a reused byte buffer, without `core::fmt`: the text trace writes millions
//! of lines, and `write!` costs several times the simulation itself.

/// Append the first `len` bytes of `bytes`: the whole array is copied and the rest cut off,
/// a copy of constant size the compiler does inline (a slice of variable length costs a call
/// to `memcpy`).
#[inline]
pub fn put_first<const N: usize>(out: &mut Vec<u8>, bytes: &[u8; N], len: usize) {
    let start = out.len();
    out.extend_from_slice(bytes);
    out.truncate(start + len);
}

/// Decimal digits of `v`.
#[inline]
fn decimal_len(v: u64) -> usize {
    v.checked_ilog10().map_or(1, |l| l as usize + 1)
}

/// The two digits of `v` (below 100).
#[inline]
fn pair(v: u64) -> [u8; 2] {
    let i = v as usize * 2;
    [PAIRS[i], PAIRS[i + 1]]
}

/// Write `v` in decimal at the start of `out` (which must hold its digits); return how many
/// bytes that took. The values of a trace are mostly small (CPUs, pids, prios): below 10⁴
/// they take no division loop.
#[inline]
pub fn digits(out: &mut [u8], v: u64) -> usize {
    if v < 10 {
        out[0] = b'0' + v as u8;
        1
    } else if v < 100 {
        out[..2].copy_from_slice(&pair(v));
        2
    } else if v < 1000 {
        out[0] = b'0' + (v / 100) as u8;
        out[1..3].copy_from_slice(&pair(v % 100));
        3
    } else if v < 10_000 {
        out[..2].copy_from_slice(&pair(v / 100));
        out[2..4].copy_from_slice(&pair(v % 100));
        4
    } else {
        long_digits(out, v)
    }
}

/// `digits` of a value of five digits or more.
fn long_digits(out: &mut [u8], v: u64) -> usize {
    let n = decimal_len(v);
    let d = &mut out[..n];
    let (mut v, mut i) = (v, n);
    while v >= 100 {
        i -= 2;
        d[i..i + 2].copy_from_slice(&pair(v % 100));
        v /= 100;
    }
    if v >= 10 {
        d[i - 2..i].copy_from_slice(&pair(v));
    } else {
        d[i - 1] = b'0' + v as u8;
    }
    n
}

/// Append `v` in decimal.
#[inline]
pub fn uint(out: &mut Vec<u8>, v: u64) {
    let mut buf = [0; 20];
    let n = digits(&mut buf, v);
    put_first(out, &buf, n);
}

/// Append `v` in decimal, with a minus sign when negative.
#[inline]
pub fn int(out: &mut Vec<u8>, v: i64) {
    if v < 0 {
        out.push(b'-');
    }
    uint(out, v.unsigned_abs());
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

/// A CPU mask in the kernel's `%*pb` hex form.
pub fn hex_mask(out: &mut Vec<u8>, m: &schedlab_base::CpuSet) {
    use std::io::Write;
    let _ = write!(out, "{m:x}");
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every helper prints what `core::fmt` prints for the same value and spec.
    #[test]
    fn helpers_match_core_fmt() {
        let values = [
            0u64,
            1,
            9,
            10,
            99,
            100,
            999,
            1000,
            9999,
            10_000,
            12345,
            999_999_999,
            1_000_000_000,
            10_000_000_000_000_000_000,
            u64::MAX,
        ];
        for &v in &values {
            let mut b = Vec::new();
            uint(&mut b, v);
            assert_eq!(b, v.to_string().into_bytes());
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
