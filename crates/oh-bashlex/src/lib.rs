//! Multi-command detection and `\;` escaping compatible with OpenHands' `split_bash_commands` and
//! `escape_bash_special_chars` (bashlex 0.18). STUB: to be implemented.

/// Split a command line into top-level commands; more than one part means the command is rejected.
pub fn split_bash_commands(command: &str) -> Vec<String> {
    if command.trim().is_empty() {
        return vec![String::new()];
    }
    vec![command.to_string()]
}

/// Double a backslash before `; & | > <` in unquoted words (what tmux send-keys later undoes).
pub fn escape_bash_special_chars(command: &str) -> String {
    if command.trim().is_empty() {
        return String::new();
    }
    command.to_string()
}
