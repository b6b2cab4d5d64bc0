use rsroman::{from_roman, to_roman};

#[test]
fn every_number_round_trips() {
    for n in 1..=3999 {
        let text = to_roman(n).unwrap();
        assert_eq!(from_roman(&text), Some(n), "{}", text);
    }
}

#[test]
fn rejects_garbage() {
    assert_eq!(from_roman("ABC"), None);
    assert_eq!(from_roman(""), None);
}
