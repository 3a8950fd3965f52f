use super::term::Term;

fn render(bytes: &[u8]) -> String {
    let mut t = Term::new();
    t.feed(bytes);
    t.capture()
}

#[test]
fn renders_basic_sequences() {
    assert_eq!(render(b"\x1b[31mred\x1b[0m plain\r\n"), "red plain");
    assert_eq!(render(b"a\tb\r\n"), "a       b");
    assert_eq!(render(b"aaa\rbb\r\n"), "bba");
    assert_eq!(render(b"x   \r\ny  \r\n"), "x\ny");
    assert_eq!(render("\u{e9}\u{2713}\r\n".as_bytes()), "\u{e9}\u{2713}");
}
