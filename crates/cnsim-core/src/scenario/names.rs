//! What a name may contain. Names (of the scenario, nodes, sources, sweep
//! variants) are printed by `cnsim run`, written into result tables and
//! used in file names: a control character in one could drive the user's
//! terminal (ESC sequences) or reorder what it shows (bidirectional
//! overrides), so they are refused, and escaped wherever a message quotes
//! user text.

/// Characters no name may contain: Unicode category Cc (C0 and C1 controls,
/// DEL) and the bidirectional marks, embeddings, overrides and isolates.
pub fn is_forbidden(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{200E}' | '\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

/// `Err` with the message when `name` has a forbidden character.
pub fn check(name: &str) -> Result<(), String> {
    match name.chars().position(is_forbidden) {
        None => Ok(()),
        Some(i) => {
            let c = name.chars().nth(i).expect("found above");
            Err(format!(
                "expected a name without control characters, found '{}' (U+{:04X} at character {})",
                shown(name),
                c as u32,
                i + 1
            ))
        }
    }
}

/// `text` with each forbidden character written as `\u{..}`, for messages.
pub fn shown(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.contains(is_forbidden) {
        return text.into();
    }
    text.chars()
        .map(|c| {
            if is_forbidden(c) {
                format!("\\u{{{:X}}}", c as u32)
            } else {
                c.to_string()
            }
        })
        .collect::<String>()
        .into()
}

/// A source without a `name` is called "HOST->DST" when it has one
/// destination and "HOST" otherwise.
pub fn default_source_name(host: &str, single_destination: Option<&str>) -> String {
    match single_destination {
        Some(d) => format!("{host}->{d}"),
        None => host.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controls_and_bidi_marks_are_refused_and_escaped() {
        for c in [
            '\0', '\u{1b}', '\u{7f}', '\u{85}', '\u{200e}', '\u{202e}', '\u{2069}',
        ] {
            assert!(is_forbidden(c), "{c:?}");
        }
        for c in ['a', 'é', '\u{200d}', '\u{2070}', '>', '{'] {
            assert!(!is_forbidden(c), "{c:?}");
        }
        assert_eq!(shown("a\u{1b}[31m"), "a\\u{1B}[31m");
        assert!(check("E1.2").is_ok());
        assert!(check("x\u{202e}")
            .unwrap_err()
            .contains("U+202E at character 2"));
    }
}
