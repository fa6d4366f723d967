//! Formatting into a reused byte buffer, without `core::fmt`: the text trace writes millions
//! of lines, and `write!` costs several times the simulation itself (issue 12).

/// The decimal digits of `v`: `digits[start..]`.
fn decimal(v: u64) -> ([u8; 20], usize) {
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    let mut v = v;
    loop {
        i -= 1;
        digits[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    (digits, i)
}

/// Append `v` in decimal.
pub fn uint(out: &mut Vec<u8>, v: u64) {
    let (digits, start) = decimal(v);
    out.extend_from_slice(&digits[start..]);
}

/// Append `v` in decimal, with a minus sign when negative.
pub fn int(out: &mut Vec<u8>, v: i64) {
    if v < 0 {
        out.push(b'-');
    }
    uint(out, v.unsigned_abs());
}

/// Append `v` in decimal, zero-padded to `width` digits (`%0Nd`).
pub fn uint_zero_padded(out: &mut Vec<u8>, v: u64, width: usize) {
    let (digits, start) = decimal(v);
    let len = digits.len() - start;
    out.resize(out.len() + width.saturating_sub(len), b'0');
    out.extend_from_slice(&digits[start..]);
}

/// Append `v` in lower-case hexadecimal, without a prefix.
pub fn hex(out: &mut Vec<u8>, v: u64) {
    let mut digits = [0u8; 16];
    let mut i = digits.len();
    let mut v = v;
    loop {
        i -= 1;
        digits[i] = b"0123456789abcdef"[(v & 0xf) as usize];
        v >>= 4;
        if v == 0 {
            break;
        }
    }
    out.extend_from_slice(&digits[i..]);
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
            let mut b = Vec::new();
            uint_left(&mut b, v, 5);
            assert_eq!(b, format!("{v:<5}").into_bytes());
            let mut b = Vec::new();
            hex(&mut b, v);
            assert_eq!(b, format!("{v:x}").into_bytes());
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
