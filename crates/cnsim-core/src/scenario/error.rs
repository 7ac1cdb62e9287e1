//! Scenario errors that name the file, line, column and field, and say what
//! was expected and what was found.

use std::fmt;

/// One segment of a path into the scenario document: `links[3].rate`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Seg {
    Key(String),
    Index(usize),
    /// One copy of a replicated entry, e.g. "e=3, j=1". Not a step in the
    /// document: the copy has no text of its own, so it is located at its
    /// template, and its errors say which copy they are about.
    Copy(String),
    /// An entry made by `[topology]`, by its name ("E1.2"). Located at the
    /// `topology` table; its errors say which entry they are about.
    Generated(String),
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FieldPath(pub Vec<Seg>);

impl FieldPath {
    pub fn root() -> Self {
        FieldPath(Vec::new())
    }
    pub fn key(&self, k: &str) -> Self {
        let mut p = self.clone();
        p.0.push(Seg::Key(k.to_string()));
        p
    }
    pub fn index(&self, i: usize) -> Self {
        let mut p = self.clone();
        p.0.push(Seg::Index(i));
        p
    }
    /// The path of one copy of the entry at `self`.
    pub fn copy(&self, label: &str) -> Self {
        let mut p = self.clone();
        p.0.push(Seg::Copy(label.to_string()));
        p
    }
    /// The path of the generated entry `name` (under `topology`).
    pub fn generated(&self, name: &str) -> Self {
        let mut p = self.clone();
        p.0.push(Seg::Generated(name.to_string()));
        p
    }
    /// Which generated entry the path is in, if any.
    pub fn generated_name(&self) -> Option<&str> {
        self.0.iter().find_map(|s| match s {
            Seg::Generated(c) => Some(c.as_str()),
            _ => None,
        })
    }
    /// Which copy of a replicated entry the path is in, if any.
    pub fn copy_label(&self) -> Option<&str> {
        self.0.iter().find_map(|s| match s {
            Seg::Copy(c) => Some(c.as_str()),
            _ => None,
        })
    }
    /// The path with its copy, for messages that point at another entry:
    /// "hosts[2], copy e=1".
    pub fn describe(&self) -> String {
        match (self.copy_label(), self.generated_name()) {
            (Some(c), _) => format!("{self}, copy {c}"),
            (None, Some(g)) => format!("{self}, generated entry '{g}'"),
            (None, None) => self.to_string(),
        }
    }
}

impl fmt::Display for FieldPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, s) in self.0.iter().enumerate() {
            match s {
                Seg::Key(k) if i == 0 => write!(f, "{k}")?,
                Seg::Key(k) => write!(f, ".{k}")?,
                Seg::Index(n) => write!(f, "[{n}]")?,
                // Said in the message instead (see `Locator::error`).
                Seg::Copy(_) | Seg::Generated(_) => {}
            }
        }
        Ok(())
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScenarioError {
    /// File name, "<dict>" or "<text>".
    pub origin: String,
    /// 1-based line and column, when the location is known.
    pub line_col: Option<(usize, usize)>,
    /// Dotted field path ("links[3].rate"); empty for whole-file problems.
    pub field: String,
    pub message: String,
}

impl fmt::Display for ScenarioError {
    /// One line; control characters quoted from the input are escaped, so
    /// that printing a message cannot drive the terminal.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use super::names::shown;
        write!(f, "{}", shown(&self.origin))?;
        if let Some((l, c)) = self.line_col {
            write!(f, ":{l}:{c}")?;
        }
        if self.field.is_empty() {
            write!(f, ": {}", shown(&self.message))
        } else {
            write!(f, ": {}: {}", shown(&self.field), shown(&self.message))
        }
    }
}

impl std::error::Error for ScenarioError {}

/// Finds where a field path sits in the source text. The text is parsed a
/// second time (keeping spans) only when an error needs a location.
pub struct Locator {
    origin: String,
    text: String,
    doc: std::cell::OnceCell<Option<toml_edit::Document<String>>>,
    /// The `--set` overrides applied to the text: errors about the values
    /// they set are theirs, not the file's.
    overrides: Vec<Applied>,
}

impl Locator {
    pub fn toml(origin: &str, text: &str) -> Self {
        Locator {
            origin: origin.to_string(),
            text: text.to_string(),
            doc: std::cell::OnceCell::new(),
            overrides: Vec::new(),
        }
    }

    /// For input without source positions (a JSON dict from Python).
    pub fn none(origin: &str) -> Self {
        Locator {
            origin: origin.to_string(),
            text: String::new(),
            // No document, so no spans: the empty text would parse as an
            // empty TOML document and put every error at 1:1.
            doc: std::cell::OnceCell::from(None),
            overrides: Vec::new(),
        }
    }

    pub fn origin(&self) -> &str {
        &self.origin
    }

    pub fn set_overrides(&mut self, applied: Vec<Applied>) {
        self.overrides = applied;
    }

    /// Adds overrides applied after the others (to expanded entries).
    pub fn add_overrides(&mut self, applied: Vec<Applied>) {
        self.overrides.extend(applied);
    }

    /// The override that set the value at `path` (or a table holding it):
    /// the last one, as it wins. An override of a template covers its
    /// copies; one of a copy or a generated entry covers that entry only.
    fn set_by(&self, path: &FieldPath) -> Option<&Applied> {
        self.overrides
            .iter()
            .rev()
            .find(|a| covers(&a.path.0, &path.0))
    }

    pub fn line_col(&self, offset: usize) -> (usize, usize) {
        let before = &self.text[..offset.min(self.text.len())];
        let line = before.matches('\n').count() + 1;
        let col = before
            .rsplit('\n')
            .next()
            .map(|l| l.chars().count())
            .unwrap_or(0)
            + 1;
        (line, col)
    }

    /// Span of the deepest existing item along `path`.
    fn span_of(&self, path: &FieldPath) -> Option<std::ops::Range<usize>> {
        let doc = self
            .doc
            .get_or_init(|| toml_edit::Document::parse(self.text.clone()).ok())
            .as_ref()?;
        let segs: Vec<Seg> = path
            .0
            .iter()
            .filter(|s| !matches!(s, Seg::Copy(_) | Seg::Generated(_)))
            .cloned()
            .collect();
        walk_item(doc.as_item(), &segs, None)
    }

    /// An error at `path`; in a copy of a replicated entry, located at the
    /// template and ending with the copy, e.g. " (copy e=3, j=1)"; in an
    /// entry of `[topology]`, located there and ending with the entry, e.g.
    /// " (generated entry 'E1.2')".
    pub fn error(&self, path: &FieldPath, message: impl Into<String>) -> ScenarioError {
        let (origin, line_col) = match self.set_by(path) {
            Some(a) => (a.origin.clone(), None),
            None => (
                self.origin.clone(),
                self.span_of(path).map(|s| self.line_col(s.start)),
            ),
        };
        let mut message = message.into();
        if let Some(c) = path.copy_label() {
            message = format!("{message} (copy {c})");
        } else if let Some(g) = path.generated_name() {
            message = format!("{message} (generated entry '{g}')");
        }
        ScenarioError {
            origin,
            line_col,
            field: path.to_string(),
            message,
        }
    }

    /// Where `path` is, for a message about another entry:
    /// "sources[0].to[1] at x.toml:18:12".
    pub fn describe_at(&self, path: &FieldPath) -> String {
        if let Some(a) = self.set_by(path) {
            return format!("{} (from {})", path.describe(), a.origin);
        }
        match self.span_of(path) {
            Some(s) => {
                let (l, c) = self.line_col(s.start);
                format!("{} at {}:{l}:{c}", path.describe(), self.origin)
            }
            None => path.describe(),
        }
    }

    /// An error without a position, about the field written `field`
    /// ("links[0].rate"): the override's if one set it.
    pub fn error_named(&self, field: String, message: String) -> ScenarioError {
        let set_by = self.overrides.iter().rev().find(|a| {
            let p = a.path.to_string();
            field
                .strip_prefix(&p)
                .is_some_and(|rest| rest.is_empty() || rest.starts_with(['.', '[']))
        });
        ScenarioError {
            origin: set_by.map_or_else(|| self.origin.clone(), |a| a.origin.clone()),
            line_col: None,
            field,
            message,
        }
    }

    /// An error at `offset` in the text; an offset past the text is that
    /// of a value set by an override (see `overrides::apply_toml`).
    pub fn error_at(&self, offset: Option<usize>, field: String, message: String) -> ScenarioError {
        let set_by = offset
            .and_then(|o| o.checked_sub(self.text.len() + 1))
            .and_then(|i| self.overrides.get(i));
        match set_by {
            Some(a) => ScenarioError {
                origin: a.origin.clone(),
                line_col: None,
                field,
                message,
            },
            None => ScenarioError {
                origin: self.origin.clone(),
                line_col: offset.map(|o| self.line_col(o)),
                field,
                message,
            },
        }
    }
}

/// Whether `at` is `applied` or under it. A copy or generated-entry segment
/// of `at` that `applied` does not name is passed over (an override of a
/// template covers every copy).
fn covers(applied: &[Seg], at: &[Seg]) -> bool {
    let mut rest = at.iter();
    applied.iter().all(|a| loop {
        match rest.next() {
            Some(s) if s == a => break true,
            Some(Seg::Copy(_) | Seg::Generated(_)) => continue,
            _ => break false,
        }
    })
}

type Span = Option<std::ops::Range<usize>>;

fn walk_item(item: &toml_edit::Item, segs: &[Seg], best: Span) -> Span {
    use toml_edit::Item;
    let best = item.span().or(best);
    let Some((seg, rest)) = segs.split_first() else {
        return best;
    };
    match (seg, item) {
        (Seg::Key(k), Item::Table(t)) => match t.get_key_value(k) {
            Some((key, it)) => walk_item(it, rest, key.span().or(best)),
            None => best,
        },
        (Seg::Index(i), Item::ArrayOfTables(a)) => match a.get(*i) {
            Some(t) => walk_item(&Item::Table(t.clone()), rest, t.span().or(best)),
            None => best,
        },
        (_, Item::Value(v)) => walk_value(v, segs, best),
        _ => best,
    }
}

fn walk_value(value: &toml_edit::Value, segs: &[Seg], best: Span) -> Span {
    use toml_edit::Value;
    let best = value.span().or(best);
    let Some((seg, rest)) = segs.split_first() else {
        return best;
    };
    match (seg, value) {
        (Seg::Key(k), Value::InlineTable(t)) => match t.get_key_value(k) {
            Some((key, toml_edit::Item::Value(v))) => walk_value(v, rest, key.span().or(best)),
            Some((key, _)) => key.span().or(best),
            None => best,
        },
        (Seg::Index(i), Value::Array(a)) => match a.get(*i) {
            Some(v) => walk_value(v, rest, best),
            None => best,
        },
        _ => best,
    }
}

/// Adds "did you mean `x`?" to serde's unknown-field and unknown-variant messages.
pub fn with_suggestion(message: &str) -> String {
    let (kind, rest) = if let Some(r) = message.strip_prefix("unknown field `") {
        ("field", r)
    } else if let Some(r) = message.strip_prefix("unknown variant `") {
        ("variant", r)
    } else {
        return message.to_string();
    };
    let Some((found, tail)) = rest.split_once('`') else {
        return message.to_string();
    };
    let candidates: Vec<&str> = tail.split('`').skip(1).step_by(2).collect();
    let best = candidates
        .iter()
        .map(|c| (similarity(found, c), *c))
        .filter(|(score, _)| *score > 0.75)
        .max_by(|a, b| a.0.total_cmp(&b.0));
    let expected = if candidates.is_empty() {
        "no fields here".to_string()
    } else {
        candidates
            .iter()
            .map(|c| format!("'{c}'"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    match best {
        Some((_, c)) => {
            format!("unknown {kind} '{found}' (did you mean '{c}'?); expected one of {expected}")
        }
        None => format!("unknown {kind} '{found}'; expected one of {expected}"),
    }
}

/// One override as applied: what errors about its value are attributed to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Applied {
    /// "--set KEY=VALUE", the origin of errors about the value.
    pub origin: String,
    /// The path of what it put in (the value, or the outermost table it
    /// made on the way), entries chosen by name resolved to their index.
    pub path: FieldPath,
}

impl Applied {
    pub(super) fn new(key: &str, value: &str, path: FieldPath) -> Self {
        Applied {
            origin: format!("--set {key}={value}"),
            path,
        }
    }
}

/// How alike a mistyped name is to a known one, in [0, 1]: Jaro-Winkler,
/// raised for what it misses on short names, a difference of case only
/// ('a' for 'A') and one swapped, missing, extra or wrong character
/// ('qnc' for 'qcn').
fn similarity(found: &str, known: &str) -> f64 {
    let score = strsim::jaro_winkler(found, known);
    if found.eq_ignore_ascii_case(known) {
        score.max(0.95)
    } else if strsim::osa_distance(found, known) == 1 && found.chars().count() >= 3 {
        score.max(0.85)
    } else {
        score
    }
}

/// The known name closest to `n`, if one is close.
pub(super) fn closest<'n>(n: &str, known: impl Iterator<Item = &'n String>) -> Option<&'n String> {
    known
        .map(|k| (similarity(n, k), k))
        .filter(|(s, _)| *s > 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0).then_with(|| b.1.cmp(a.1)))
        .map(|(_, k)| k)
}

/// "unknown WHAT 'N'", naming the known name closest to `n` if one is close.
pub(super) fn unknown_name<'n>(
    what: &str,
    n: &str,
    known: impl Iterator<Item = &'n String>,
) -> String {
    match closest(n, known) {
        Some(k) => format!("unknown {what} '{n}' (did you mean '{k}'?)"),
        None => format!("unknown {what} '{n}'"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggests_a_name_with_two_letters_swapped_or_another_case() {
        let m =
            with_suggestion("unknown field `qnc`, expected one of `bcn`, `e2cm`, `qcn` or `tcp`");
        assert!(m.contains("did you mean 'qcn'"), "{m}");
        let known = ["A".to_string(), "B".to_string()];
        assert_eq!(
            unknown_name("host", "a", known.iter()),
            "unknown host 'a' (did you mean 'A'?)"
        );
        // Nothing close: no suggestion.
        let m = with_suggestion("unknown field `zzz`, expected one of `bcn`, `qcn`");
        assert!(!m.contains("did you mean"), "{m}");
    }

    #[test]
    fn suggests_the_closest_field() {
        let m = with_suggestion("unknown field `rat`, expected `between`, `rate` or `delay`");
        assert!(m.contains("did you mean 'rate'"), "{m}");
    }

    #[test]
    fn an_override_of_a_template_covers_its_copies_one_of_a_copy_that_copy() {
        let host = FieldPath::root().key("hosts").index(1);
        let field = |p: &FieldPath| p.key("egress").0;
        let copy1 = host.copy("e=1");
        let copy2 = host.copy("e=2");
        assert!(covers(&field(&host), &field(&copy1)));
        assert!(covers(&field(&copy1), &field(&copy1)));
        assert!(!covers(&field(&copy1), &field(&copy2)));
        assert!(!covers(&field(&copy1), &field(&host)));
        let topo = FieldPath::root().key("topology");
        let (e1, e2) = (topo.generated("E1.1"), topo.generated("E1.2"));
        assert!(covers(&e1.0, &field(&e1)));
        assert!(!covers(&field(&e1), &field(&e2)));
        assert!(covers(&topo.0, &field(&e2))); // a [topology] the override made
    }

    #[test]
    fn locates_nested_fields() {
        let text = "duration = \"1ms\"\n[[links]]\nbetween = [\"a\", \"b\"]\n\n[[links]]\nrate = \"10 Gbs\"\n";
        let loc = Locator::toml("x.toml", text);
        let e = loc.error(&FieldPath::root().key("links").index(1).key("rate"), "bad");
        assert_eq!(e.line_col, Some((6, 8)));
        assert_eq!(e.to_string(), "x.toml:6:8: links[1].rate: bad");
    }
}
