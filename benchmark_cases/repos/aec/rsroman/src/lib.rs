//! Roman numerals from 1 to 3999.

const TABLE: [(u32, &str); 13] = [
    (1000, "M"), (900, "CM"), (500, "D"), (400, "CD"), (100, "C"), (90, "XC"),
    (50, "L"), (40, "XL"), (10, "X"), (9, "IX"), (5, "V"), (4, "IV"), (1, "I"),
];

/// `n` as a Roman numeral; `None` outside 1..=3999.
pub fn to_roman(mut n: u32) -> Option<String> {
    if n == 0 || n > 3999 {
        return None;
    }
    let mut out = String::new();
    for &(value, glyph) in TABLE.iter() {
        while n >= value {
            out.push_str(glyph);
            n -= value;
        }
    }
    Some(out)
}

/// `n` as "numeral (value)", e.g. "XIV (14)"; `None` outside 1..=3999.
pub fn describe(n: u32) -> Option<String> {
    let roman = to_roman(n)?;
    let mut digits = itoa::Buffer::new();
    Some(format!("{} ({})", roman, digits.format(n)))
}

/// The value of a canonical Roman numeral; `None` when it is not one.
pub fn from_roman(text: &str) -> Option<u32> {
    let mut rest = text;
    let mut total = 0;
    for &(value, glyph) in TABLE.iter() {
        while rest.starts_with(glyph) {
            total += value;
            rest = &rest[glyph.len()..];
        }
    }
    if rest.is_empty() && to_roman(total).as_deref() == Some(text) {
        Some(total)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        assert_eq!(to_roman(1994).as_deref(), Some("MCMXCIV"));
        assert_eq!(to_roman(0), None);
    }

    #[test]
    fn describes() {
        assert_eq!(describe(14).as_deref(), Some("XIV (14)"));
    }

    #[test]
    fn parses() {
        assert_eq!(from_roman("MMXXIV"), Some(2024));
        assert_eq!(from_roman("IIII"), None);
    }
}
