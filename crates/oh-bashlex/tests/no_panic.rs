//! The functions must never panic (or hang) on arbitrary input.

use oh_bashlex::{
    escape_bash_special_chars, split_bash_commands, try_escape_bash_special_chars, try_split_bash_commands,
};
use proptest::prelude::*;

/// Shell-flavoured fragments, so that random strings reach deep parser states.
fn fragment() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("echo".to_string()),
        Just(" ".to_string()),
        Just("\n".to_string()),
        Just(";".to_string()),
        Just("&&".to_string()),
        Just("|".to_string()),
        Just("&".to_string()),
        Just("\\".to_string()),
        Just("\\;".to_string()),
        Just("\"".to_string()),
        Just("'".to_string()),
        Just("`".to_string()),
        Just("$(".to_string()),
        Just("$((".to_string()),
        Just("${".to_string()),
        Just("(".to_string()),
        Just(")".to_string()),
        Just("{".to_string()),
        Just("}".to_string()),
        Just("#".to_string()),
        Just("<<EOF\n".to_string()),
        Just("<<-EOF\n\t".to_string()),
        Just("EOF".to_string()),
        Just("<(".to_string()),
        Just(">&".to_string()),
        Just("2>".to_string()),
        Just("if".to_string()),
        Just("then".to_string()),
        Just("fi".to_string()),
        Just("for".to_string()),
        Just("in".to_string()),
        Just("do".to_string()),
        Just("done".to_string()),
        Just("while".to_string()),
        Just("case".to_string()),
        Just("esac".to_string()),
        Just("function".to_string()),
        Just("!".to_string()),
        Just("~".to_string()),
        Just("x=".to_string()),
        Just("é".to_string()),
        "[a-z0-9]{1,3}".prop_map(|s| s),
        any::<char>().prop_map(|c| c.to_string()),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn never_panics_on_fragments(parts in proptest::collection::vec(fragment(), 0..24)) {
        let s: String = parts.concat();
        let split = split_bash_commands(&s);
        prop_assert!(!split.is_empty());
        let _ = escape_bash_special_chars(&s);
        let _ = try_split_bash_commands(&s);
        let _ = try_escape_bash_special_chars(&s);
    }

    #[test]
    fn never_panics_on_arbitrary_strings(s in any::<String>()) {
        let split = split_bash_commands(&s);
        prop_assert!(!split.is_empty());
        let _ = escape_bash_special_chars(&s);
    }

    #[test]
    fn one_line_is_one_part_and_keeps_text(s in "[a-z ;|&\\\\'\"$(){}<>`]{0,30}") {
        // Without newlines (and without `#`: bashlex restarts one character *after* a node, so
        // `a;#b` really is two parts) there is at most one top-level node, so the split is one
        // part, and it is the input minus whitespace the split strips.
        let split = split_bash_commands(&s);
        prop_assert_eq!(split.len(), 1);
        let squash = |t: &str| t.chars().filter(|c| !c.is_whitespace()).collect::<String>();
        prop_assert_eq!(squash(&split[0]), squash(&s));
    }
}

#[test]
fn deep_nesting_does_not_overflow() {
    for depth in [50usize, 200, 2000] {
        let s = "$(".repeat(depth) + &")".repeat(depth);
        let _ = split_bash_commands(&format!("echo {s}"));
        let s = "(".repeat(depth) + "ls" + &")".repeat(depth);
        let _ = split_bash_commands(&s);
        let _ = escape_bash_special_chars(&s);
        let s = "{ ".repeat(depth) + "ls" + &"; }".repeat(depth);
        let _ = split_bash_commands(&s);
        let s = "\"$(echo ".repeat(depth) + &")\"".repeat(depth);
        let _ = split_bash_commands(&s);
    }
}
