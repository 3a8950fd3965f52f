//! A port of Python's `difflib.SequenceMatcher` and `unified_diff`. STUB: to be implemented.

/// `openhands_aci.utils.diff.get_diff(old, new, path)`: unified diff with zero context of
/// `old.split('\n')` against `new.split('\n')`, every line right-stripped, joined with `\n`.
pub fn get_diff(old: &str, new: &str, path: &str) -> String {
    if old == new {
        return String::new();
    }
    let _ = path;
    String::new()
}
