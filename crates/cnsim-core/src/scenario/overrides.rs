//! `--set key=value` overrides, applied to the document before validation.
//!
//! Keys are dotted paths with array selectors: `duration`,
//! `defaults.switch.buffer`, `links[0].rate`, `switches[CORE].latency`
//! (an array element chosen by its `name`, which may contain dots:
//! `hosts[C1.2].egress`; in a file with replicated entries, the name of a
//! template as written: `hosts[C{e}.{j}].egress`). Values are TOML literals
//! (`3`, `0.5`, `true`, `["a", "b"]`); anything else is taken as a string
//! (`20ms`, `150KB`). Missing tables on the way are created.
//!
//! Entries that `[topology]` generates or `repeat` copies are not in the
//! document: an override that selects a switch, host, link or source by a
//! name no written entry has, or by a glob pattern (`switches[A*].buffer`),
//! is deferred and applied to the entries after expansion
//! (`apply_to_entries`), to every one the selector names.

use super::entry::{Entries, Entry};
use super::error::{closest, with_suggestion, Applied, FieldPath, ScenarioError};
use super::schema::Destinations;
use toml::de::{DeTable, DeValue};
use toml::Spanned;

/// The lists of entries that expansion adds to: what a deferred override
/// may select from.
const ENTRY_KINDS: [&str; 4] = ["switches", "hosts", "links", "sources"];

/// An override for the entries after expansion: `KIND[SELECTOR].REST=VALUE`.
#[derive(Debug, Clone)]
pub struct Deferred {
    key: String,
    value: String,
    kind: String,
    selector: String,
    rest: Vec<Step>,
}

/// A selector with `*` or `?` is a glob pattern; any other is a name.
fn is_pattern(selector: &str) -> bool {
    selector.contains(['*', '?'])
}

/// The override as a deferred one, if it selects an entry of `ENTRY_KINDS`
/// by a pattern or by a name `written` does not know.
fn deferred(
    steps: &[Step],
    key: &str,
    value: &str,
    written: impl Fn(&str, &str) -> bool,
) -> Option<Deferred> {
    let [Step::Key(kind), Step::Named(selector), rest @ ..] = steps else {
        return None;
    };
    let defer =
        ENTRY_KINDS.contains(&kind.as_str()) && (is_pattern(selector) || !written(kind, selector));
    defer.then(|| Deferred {
        key: key.to_string(),
        value: value.to_string(),
        kind: kind.clone(),
        selector: selector.clone(),
        rest: rest.to_vec(),
    })
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Step {
    Key(String),
    Index(usize),
    Named(String),
}

fn fail(key: &str, msg: impl Into<String>) -> ScenarioError {
    ScenarioError {
        origin: "--set".into(),
        line_col: None,
        field: key.into(),
        message: msg.into(),
    }
}

/// Splits a key at the dots outside `[...]`.
fn split_parts(key: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut start, mut in_selector) = (0, false);
    for (i, c) in key.char_indices() {
        match c {
            '[' => in_selector = true,
            ']' => in_selector = false,
            '.' if !in_selector => {
                parts.push(&key[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&key[start..]);
    parts
}

fn parse_path(key: &str) -> Result<Vec<Step>, ScenarioError> {
    let mut steps = Vec::new();
    for part in split_parts(key) {
        let (name, mut rest) = match part.find('[') {
            Some(i) => (&part[..i], &part[i..]),
            None => (part, ""),
        };
        if name.is_empty()
            || !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        {
            return Err(fail(key, format!("expected a path like 'links[0].rate' or 'switches[CORE].buffer', found '{key}'")));
        }
        steps.push(Step::Key(name.to_string()));
        while let Some(r) = rest.strip_prefix('[') {
            let Some(close) = r.find(']') else {
                return Err(fail(key, "unclosed '['"));
            };
            let sel = &r[..close];
            if sel.is_empty() {
                return Err(fail(key, "empty '[]' selector"));
            }
            steps.push(match sel.parse::<usize>() {
                Ok(i) => Step::Index(i),
                Err(_) => Step::Named(sel.to_string()),
            });
            rest = &r[close + 1..];
        }
        if !rest.is_empty() {
            return Err(fail(key, format!("unexpected '{rest}' in the path")));
        }
    }
    Ok(steps)
}

fn toml_literal(value: &str) -> toml_edit::Value {
    value
        .parse::<toml_edit::Value>()
        .unwrap_or_else(|_| toml_edit::Value::from(value))
}

/// Applies the overrides to a parsed document in place. The document keeps
/// the spans of the file's text, so that errors about the file stay where
/// they are written; what an override puts in gets the span
/// `text_len + 1 + i` (past the text) for override `i`, which
/// `Locator::error_at` attributes to that override.
pub fn apply_toml<'i>(
    doc: &mut DeTable<'i>,
    text_len: usize,
    overrides: &'i [(String, String)],
) -> Result<(Vec<Applied>, Vec<Deferred>), ScenarioError> {
    let mut applied = Vec::with_capacity(overrides.len());
    let mut later = Vec::new();
    for (i, (key, value)) in overrides.iter().enumerate() {
        let steps = parse_path(key)?;
        let written = |kind: &str, name: &str| match doc.get(kind).map(|v| v.get_ref()) {
            Some(DeValue::Array(a)) => a
                .iter()
                .any(|e| de_element_name(e.get_ref()).as_deref() == Some(name)),
            _ => false,
        };
        if let Some(d) = deferred(&steps, key, value, written) {
            later.push(d);
            continue;
        }
        let span = text_len + 1 + i;
        let (mut path, mut made) = (FieldPath::root(), None);
        set_in_detable(
            doc,
            &steps,
            key,
            de_literal(value, span),
            span,
            &mut path,
            &mut made,
        )?;
        applied.push(Applied::new(key, value, made.unwrap_or(path)));
    }
    Ok((applied, later))
}

/// An override value as a TOML literal, or else a plain string, with every
/// span (of nested values and keys too) set to `at`.
fn de_literal(value: &str, at: usize) -> Spanned<DeValue<'_>> {
    let v = match DeValue::parse(value) {
        Ok(v) => v.into_inner(),
        Err(_) => DeValue::String(value.into()),
    };
    respan(v, at)
}

fn respan(v: DeValue<'_>, at: usize) -> Spanned<DeValue<'_>> {
    let v = match v {
        DeValue::Array(a) => {
            DeValue::Array(a.into_iter().map(|e| respan(e.into_inner(), at)).collect())
        }
        DeValue::Table(t) => DeValue::Table(
            t.into_iter()
                .map(|(k, e)| {
                    (
                        Spanned::new(at..at, k.into_inner()),
                        respan(e.into_inner(), at),
                    )
                })
                .collect(),
        ),
        v => v,
    };
    Spanned::new(at..at, v)
}

fn set_in_detable<'i>(
    table: &mut DeTable<'i>,
    steps: &[Step],
    key: &str,
    value: Spanned<DeValue<'i>>,
    span: usize,
    path: &mut FieldPath,
    made: &mut Option<FieldPath>,
) -> Result<(), ScenarioError> {
    let Some((Step::Key(k), rest)) = steps.split_first() else {
        return Err(fail(key, "expected a field name"));
    };
    *path = path.key(k);
    let Some((next, after)) = rest.split_first() else {
        table.insert(Spanned::new(span..span, k.clone().into()), value);
        return Ok(());
    };
    if table.get(k.as_str()).is_none() && matches!(next, Step::Key(_)) {
        made.get_or_insert_with(|| path.clone());
        table.insert(
            Spanned::new(span..span, k.clone().into()),
            Spanned::new(span..span, DeValue::Table(DeTable::new())),
        );
    }
    let child = table
        .get_mut(k.as_str())
        .ok_or_else(|| fail(key, format!("there is no '{k}' array to select from")))?
        .get_mut();
    match next {
        Step::Key(_) => match child {
            DeValue::Table(t) => set_in_detable(t, rest, key, value, span, path, made),
            _ => Err(fail(key, format!("'{k}' is not a table"))),
        },
        Step::Index(_) | Step::Named(_) => {
            let DeValue::Array(a) = child else {
                return Err(fail(key, format!("'{k}' is not an array")));
            };
            let n = a.len();
            let i = match next {
                Step::Index(i) if *i < n => *i,
                Step::Index(i) => {
                    return Err(fail(
                        key,
                        format!("index {i} is out of range ('{k}' has {n} entries)"),
                    ))
                }
                Step::Named(name) => (0..n)
                    .find(|&i| de_element_name(a[i].get_ref()).as_deref() == Some(name.as_str()))
                    .ok_or_else(|| fail(key, format!("no entry of '{k}' is named '{name}'")))?,
                Step::Key(_) => unreachable!(),
            };
            if after.is_empty() {
                return Err(fail(
                    key,
                    "cannot replace a whole array entry; set one of its fields",
                ));
            }
            *path = path.index(i);
            match a.as_mut()[i].get_mut() {
                DeValue::Table(t) => set_in_detable(t, after, key, value, span, path, made),
                _ => Err(fail(key, "array entry is not a table")),
            }
        }
    }
}

fn de_element_name(entry: &DeValue) -> Option<String> {
    let DeValue::Table(t) = entry else {
        return None;
    };
    let field = |k: &str| t.get(k).and_then(|v| v.get_ref().as_str());
    entry_name(field("name"), field("host"), field("to"))
}

/// The name an array entry goes by: its `name`, or for a source without
/// one the name validation gives it.
fn entry_name(name: Option<&str>, host: Option<&str>, to: Option<&str>) -> Option<String> {
    match (name, host) {
        (Some(n), _) => Some(n.to_string()),
        (None, Some(h)) => Some(super::names::default_source_name(
            h,
            to.filter(|t| *t != "*"),
        )),
        (None, None) => None,
    }
}

/// Applies the overrides to a JSON document (a scenario given as a dict).
pub fn apply_json(
    text: &str,
    overrides: &[(String, String)],
) -> Result<(String, Vec<Applied>, Vec<Deferred>), ScenarioError> {
    if overrides.is_empty() {
        return Ok((text.to_string(), Vec::new(), Vec::new()));
    }
    let Ok(mut doc) = serde_json::from_str::<serde_json::Value>(text) else {
        return Ok((text.to_string(), Vec::new(), Vec::new()));
    };
    let mut applied = Vec::with_capacity(overrides.len());
    let mut later = Vec::new();
    for (key, value) in overrides {
        let steps = parse_path(key)?;
        let written = |kind: &str, name: &str| {
            doc.get(kind)
                .and_then(serde_json::Value::as_array)
                .is_some_and(|a| {
                    a.iter()
                        .any(|e| json_element_name(e).as_deref() == Some(name))
                })
        };
        if let Some(d) = deferred(&steps, key, value, written) {
            later.push(d);
            continue;
        }
        let v = toml_value_to_json(&toml_literal(value)).map_err(|found| ScenarioError {
            origin: format!("--set {key}={value}"),
            line_col: None,
            field: key.clone(),
            message: format!(
                "expected a finite number, found {found} (NaN and infinities are not numbers here)"
            ),
        })?;
        let mut path = FieldPath::root();
        set_json(&mut doc, &steps, key, v, &mut path)?;
        applied.push(Applied::new(key, value, path));
    }
    Ok((doc.to_string(), applied, later))
}

fn json_element_name(e: &serde_json::Value) -> Option<String> {
    let field = |k: &str| e.get(k).and_then(serde_json::Value::as_str);
    entry_name(field("name"), field("host"), field("to"))
}

/// JSON has no NaN or infinity (serde_json would make them null, read
/// as a missing value): `Err` with the number found.
fn toml_value_to_json(v: &toml_edit::Value) -> Result<serde_json::Value, f64> {
    use toml_edit::Value;
    Ok(match v {
        Value::String(s) => serde_json::Value::from(s.value().as_str()),
        Value::Integer(i) => serde_json::Value::from(*i.value()),
        Value::Float(f) if !f.value().is_finite() => return Err(*f.value()),
        Value::Float(f) => serde_json::Value::from(*f.value()),
        Value::Boolean(b) => serde_json::Value::from(*b.value()),
        Value::Datetime(d) => serde_json::Value::from(d.value().to_string()),
        Value::Array(a) => {
            serde_json::Value::Array(a.iter().map(toml_value_to_json).collect::<Result<_, _>>()?)
        }
        Value::InlineTable(t) => serde_json::Value::Object(
            t.iter()
                .map(|(k, v)| Ok::<_, f64>((k.to_string(), toml_value_to_json(v)?)))
                .collect::<Result<_, _>>()?,
        ),
    })
}

fn set_json(
    node: &mut serde_json::Value,
    steps: &[Step],
    key: &str,
    value: serde_json::Value,
    path: &mut FieldPath,
) -> Result<(), ScenarioError> {
    use serde_json::Value;
    let (step, rest) = steps.split_first().expect("non-empty path");
    match step {
        Step::Key(k) => {
            *path = path.key(k);
            let obj = node
                .as_object_mut()
                .ok_or_else(|| fail(key, format!("'{k}' is not inside a table")))?;
            if rest.is_empty() {
                obj.insert(k.clone(), value);
                return Ok(());
            }
            let child = obj
                .entry(k.clone())
                .or_insert_with(|| Value::Object(Default::default()));
            set_json(child, rest, key, value, path)
        }
        Step::Index(_) | Step::Named(_) => {
            let arr = node
                .as_array_mut()
                .ok_or_else(|| fail(key, "a '[...]' selector needs an array"))?;
            let n = arr.len();
            let i = match step {
                Step::Index(i) if *i < n => *i,
                Step::Index(i) => {
                    return Err(fail(
                        key,
                        format!("index {i} is out of range (the array has {n} entries)"),
                    ))
                }
                Step::Named(name) => arr
                    .iter()
                    .position(|e| json_element_name(e).as_deref() == Some(name.as_str()))
                    .ok_or_else(|| fail(key, format!("no entry named '{name}'")))?,
                Step::Key(_) => unreachable!(),
            };
            if rest.is_empty() {
                return Err(fail(
                    key,
                    "cannot replace a whole array entry; set one of its fields",
                ));
            }
            *path = path.index(i);
            set_json(&mut arr[i], rest, key, value, path)
        }
    }
}

/// What an expanded entry answers to in a selector.
trait Selectable: serde::Serialize + serde::de::DeserializeOwned {
    /// Its names: a switch's or host's `name`; a source's `name`, or the
    /// one validation gives it ("HOST->DST"); a link's "A->B", either way
    /// round.
    fn names(&self) -> Vec<String>;
}

impl Selectable for super::schema::RawSwitch {
    fn names(&self) -> Vec<String> {
        self.name.iter().cloned().collect()
    }
}

impl Selectable for super::schema::RawHost {
    fn names(&self) -> Vec<String> {
        self.name.iter().cloned().collect()
    }
}

impl Selectable for super::schema::RawLink {
    fn names(&self) -> Vec<String> {
        match self.between.as_deref() {
            Some([a, b]) => vec![format!("{a}->{b}"), format!("{b}->{a}")],
            _ => Vec::new(),
        }
    }
}

impl Selectable for super::schema::RawSource {
    fn names(&self) -> Vec<String> {
        let single = match &self.to {
            Some(Destinations::One(d)) => Some(d.as_str()),
            Some(Destinations::Many(list)) if list.len() == 1 => Some(list[0].as_str()),
            _ => None,
        };
        entry_name(self.name.as_deref(), self.host.as_deref(), single)
            .into_iter()
            .collect()
    }
}

/// Applies the deferred overrides to the entries after expansion, in
/// order; returns them as applied, one per entry each set.
pub(super) fn apply_to_entries(
    entries: &mut Entries,
    deferred: &[Deferred],
) -> Result<Vec<Applied>, ScenarioError> {
    let mut applied = Vec::new();
    for d in deferred {
        match d.kind.as_str() {
            "switches" => apply_to_kind(&mut entries.switches, d, &mut applied),
            "hosts" => apply_to_kind(&mut entries.hosts, d, &mut applied),
            "links" => apply_to_kind(&mut entries.links, d, &mut applied),
            _ => apply_to_kind(&mut entries.sources, d, &mut applied),
        }
        .map_err(|message| ScenarioError {
            origin: format!("--set {}={}", d.key, d.value),
            line_col: None,
            field: d.key.clone(),
            message,
        })?;
    }
    Ok(applied)
}

fn apply_to_kind<T: Selectable>(
    list: &mut [Entry<T>],
    d: &Deferred,
    applied: &mut Vec<Applied>,
) -> Result<(), String> {
    match d.rest.first() {
        None => return Err("cannot replace a whole array entry; set one of its fields".into()),
        Some(Step::Key(k)) if k == "repeat" => {
            return Err(format!(
                "'repeat' belongs to the entries as written: select a template by its index or its name as written ('{}[0].repeat...')",
                d.kind
            ))
        }
        _ => {}
    }
    let pattern = is_pattern(&d.selector);
    let glob = |case_insensitive: bool| {
        globset::GlobBuilder::new(&d.selector)
            .case_insensitive(case_insensitive)
            .build()
            .map(|g| g.compile_matcher())
            .map_err(|e| {
                format!(
                    "expected a glob pattern ('*' any text, '?' one character), found '{}' ({})",
                    d.selector,
                    e.kind()
                )
            })
    };
    let matcher = if pattern { Some(glob(false)?) } else { None };
    let selects = |name: &str| match &matcher {
        Some(m) => m.is_match(name),
        None => name == d.selector,
    };
    let value = d
        .value
        .parse::<toml::Value>()
        .unwrap_or_else(|_| toml::Value::String(d.value.clone()));
    let mut found = false;
    for e in list.iter_mut() {
        if e.raw.names().iter().any(|n| selects(n)) {
            let path = patch(e, &d.rest, value.clone())?;
            applied.push(Applied::new(&d.key, &d.value, path));
            found = true;
        }
    }
    if found {
        return Ok(());
    }
    // Nothing selected: say what there is, and what is close.
    let names: Vec<String> = list
        .iter()
        .filter_map(|e| e.raw.names().into_iter().next())
        .collect();
    let close = if pattern {
        let m = glob(true)?;
        names.iter().find(|n| m.is_match(n.as_str())).cloned()
    } else {
        closest(&d.selector, names.iter()).cloned()
    };
    let mut msg = match pattern {
        true => format!(
            "no entry of '{}' matches the pattern '{}'",
            d.kind, d.selector
        ),
        false => format!("no entry of '{}' is named '{}'", d.kind, d.selector),
    };
    match (close, pattern) {
        (Some(c), true) => {
            msg += &format!(" (names are case-sensitive: '{c}' matches if case is ignored)")
        }
        (Some(c), false) => msg += &format!(" (did you mean '{c}'?)"),
        (None, _) => {}
    }
    const SHOWN: usize = 5;
    if names.is_empty() {
        msg += &format!("; the scenario has no {}", d.kind);
    } else {
        let more = names.len().saturating_sub(SHOWN);
        let shown: Vec<String> = names.iter().take(SHOWN).map(|n| format!("'{n}'")).collect();
        msg += &format!("; {} are {}", d.kind, shown.join(", "));
        if more > 0 {
            msg += &format!(" and {more} more");
        }
    }
    Err(msg)
}

/// Sets `rest` = `value` in the entry `e`; returns the path of what was
/// put in (the value, or the outermost table made on the way). The entry
/// goes through a TOML value and back, so that what the override sets is
/// checked like the file's own keys (unknown keys, types).
fn patch<T: Selectable>(
    e: &mut Entry<T>,
    rest: &[Step],
    value: toml::Value,
) -> Result<FieldPath, String> {
    let mut doc = toml::Value::try_from(&e.raw)
        .map_err(|err| format!("cannot apply the override to {}: {err}", e.path.describe()))?;
    let (mut path, mut made) = (e.path.clone(), None);
    set_toml(&mut doc, rest, value, &mut path, &mut made)?;
    e.raw = serde_path_to_error::deserialize(doc).map_err(|err| {
        let at = err.path().to_string();
        let msg = with_suggestion(err.into_inner().message().trim());
        if at == "." {
            msg
        } else {
            format!("{at}: {msg}")
        }
    })?;
    Ok(made.unwrap_or(path))
}

fn set_toml(
    node: &mut toml::Value,
    steps: &[Step],
    value: toml::Value,
    path: &mut FieldPath,
    made: &mut Option<FieldPath>,
) -> Result<(), String> {
    let (step, rest) = steps.split_first().expect("non-empty path");
    match step {
        Step::Key(k) => {
            *path = path.key(k);
            let table = node
                .as_table_mut()
                .ok_or_else(|| format!("'{k}' is not inside a table"))?;
            if rest.is_empty() {
                table.insert(k.clone(), value);
                return Ok(());
            }
            let child = table.entry(k.clone()).or_insert_with(|| {
                made.get_or_insert_with(|| path.clone());
                toml::Value::Table(Default::default())
            });
            set_toml(child, rest, value, path, made)
        }
        Step::Index(i) => {
            let arr = node
                .as_array_mut()
                .ok_or("a '[...]' selector needs an array")?;
            let n = arr.len();
            let Some(element) = arr.get_mut(*i) else {
                return Err(format!(
                    "index {i} is out of range (the array has {n} entries)"
                ));
            };
            if rest.is_empty() {
                return Err("cannot replace a whole array entry; set one of its fields".into());
            }
            *path = path.index(*i);
            set_toml(element, rest, value, path, made)
        }
        Step::Named(n) => Err(format!(
            "'[{n}]': arrays inside an entry are selected by index"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::net::topology::NodeKind;
    use crate::scenario::{load, Format, Scenario};
    use crate::units::{Rate, Time};

    /// A k = 4 fat tree, two replicated sources from pod 1 to pod 4, and
    /// one written host and link.
    const FAT_TREE: &str = r#"
duration = "1ms"
[topology]
kind = "fat_tree"
k = 4
[defaults.switch]
buffer = "100KB"
[[hosts]]
name = "X"
[[links]]
between = ["X", "C1.1"]
[[sources]]
host = "H1.1.{h}"
to = "H4.2.{h}"
load = 0.1
repeat = { h = 2 }
"#;

    fn with(text: &str, sets: &[(&str, &str)]) -> Result<Scenario, ScenarioError> {
        let sets: Vec<(String, String)> = sets
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        load(text, "x.toml", Format::Toml, &sets)
    }

    fn buffer(sc: &Scenario, name: &str) -> crate::net::topology::BufferModel {
        match &sc.nodes.iter().find(|n| n.name == name).unwrap().kind {
            NodeKind::Switch(sw) => sw.buffer,
            NodeKind::Host(_) => panic!("{name} is a host"),
        }
    }

    fn link_rate(sc: &Scenario, a: &str, b: &str) -> Rate {
        let id = |n: &str| sc.nodes.iter().position(|x| x.name == n).unwrap();
        let (a, b) = (id(a), id(b));
        sc.links
            .iter()
            .find(|l| (l.a, l.b) == (a, b) || (l.a, l.b) == (b, a))
            .unwrap()
            .rate
    }

    #[test]
    fn overrides_reach_generated_and_copied_entries_by_name() {
        let base = with(FAT_TREE, &[]).unwrap();
        let sc = with(
            FAT_TREE,
            &[
                ("switches[A1.1].buffer", "300KB"),
                ("hosts[H4.2.2].response_time", "7us"),
                ("links[E1.1->A1.2].rate", "40Gbps"),
                ("sources[H1.1.2->H4.2.2].load", "0.5"),
            ],
        )
        .unwrap();
        assert_ne!(buffer(&sc, "A1.1"), buffer(&base, "A1.1"));
        assert_eq!(buffer(&sc, "A1.2"), buffer(&base, "A1.2"));
        let host =
            |sc: &Scenario, n: &str| match &sc.nodes.iter().find(|x| x.name == n).unwrap().kind {
                NodeKind::Host(h) => h.response_time,
                NodeKind::Switch(_) => unreachable!(),
            };
        assert_eq!(host(&sc, "H4.2.2"), Time::from_us(7));
        assert_eq!(host(&sc, "H4.2.1"), host(&base, "H4.2.1"));
        // Either way round; the other links keep the default rate.
        assert_eq!(link_rate(&sc, "A1.2", "E1.1"), Rate::gbps(40));
        assert_eq!(
            link_rate(&sc, "A1.1", "E1.1"),
            link_rate(&base, "A1.1", "E1.1")
        );
        let load = |sc: &Scenario, n: &str| sc.sources.iter().find(|s| s.name == n).unwrap().load;
        assert_eq!(load(&sc, "H1.1.2->H4.2.2"), 0.5);
        assert_eq!(load(&sc, "H1.1.1->H4.2.1"), 0.1);
    }

    #[test]
    fn a_pattern_sets_every_entry_it_matches_generated_or_written() {
        let base = with(FAT_TREE, &[]).unwrap();
        let sc = with(
            FAT_TREE,
            &[
                ("switches[A*].buffer", "300KB"),
                ("links[X->*].rate", "1Gbps"),
            ],
        )
        .unwrap();
        for n in &sc.nodes {
            if matches!(n.kind, NodeKind::Switch(_)) {
                let changed = buffer(&sc, &n.name) != buffer(&base, &n.name);
                assert_eq!(changed, n.name.starts_with('A'), "{}", n.name);
            }
        }
        assert_eq!(link_rate(&sc, "X", "C1.1"), Rate::gbps(1));
        let sc = with(FAT_TREE, &[("sources[H1.1.?->*].load", "0.3")]).unwrap();
        assert!(sc.sources.iter().all(|s| s.load == 0.3));
    }

    #[test]
    fn a_written_entry_is_still_set_before_expansion() {
        // `hosts[X]` names a written entry: set in the document, like before.
        let sc = with(FAT_TREE, &[("hosts[X].response_time", "3us")]).unwrap();
        match &sc.nodes.iter().find(|x| x.name == "X").unwrap().kind {
            NodeKind::Host(h) => assert_eq!(h.response_time, Time::from_us(3)),
            NodeKind::Switch(_) => unreachable!(),
        }
    }

    #[test]
    fn selecting_nothing_names_the_selector_what_there_is_and_what_is_close() {
        let e = with(FAT_TREE, &[("switches[agg*].buffer", "1MB")]).unwrap_err();
        assert_eq!(e.origin, "--set switches[agg*].buffer=1MB");
        assert_eq!(e.field, "switches[agg*].buffer");
        assert!(e.message.starts_with("no entry of 'switches' matches the pattern 'agg*'; switches are 'E1.1', 'E1.2', 'E2.1', 'E2.2', 'E3.1' and 15 more"), "{}", e.message);
        let e = with(FAT_TREE, &[("switches[a1.*].buffer", "1MB")]).unwrap_err();
        assert!(
            e.message
                .contains("names are case-sensitive: 'A1.1' matches if case is ignored"),
            "{}",
            e.message
        );
        let e = with(FAT_TREE, &[("switches[A1.3].buffer", "1MB")]).unwrap_err();
        assert!(
            e.message
                .starts_with("no entry of 'switches' is named 'A1.3' (did you mean 'A1.1'?)"),
            "{}",
            e.message
        );
        let e = with(FAT_TREE, &[("sources[H1->H5].load", "0.2")]).unwrap_err();
        assert!(
            e.message
                .starts_with("no entry of 'sources' is named 'H1->H5'"),
            "{}",
            e.message
        );
        assert!(e.message.contains("'H1.1.1->H4.2.1'"), "{}", e.message);
    }

    #[test]
    fn a_bad_field_or_value_names_the_override() {
        let e = with(FAT_TREE, &[("switches[A*].bufer", "1MB")]).unwrap_err();
        assert_eq!(e.origin, "--set switches[A*].bufer=1MB");
        assert!(
            e.message
                .contains("unknown field 'bufer' (did you mean 'buffer'?)"),
            "{}",
            e.message
        );
        // A value refused by validation is the override's, at the entry it reached.
        let e = with(FAT_TREE, &[("switches[C*].latency", "5 parsecs")]).unwrap_err();
        assert_eq!(e.origin, "--set switches[C*].latency=5 parsecs");
        assert!(e.message.contains("(generated entry 'C1.1')"), "{e}");
        let e = with(FAT_TREE, &[("sources[H1.1.2->*].start", "soon")]).unwrap_err();
        assert_eq!(e.origin, "--set sources[H1.1.2->*].start=soon");
        assert!(e.message.ends_with("(copy h=2)"), "{e}");
        // ... and only there: the same error in the file is the file's.
        let e = with(
            &FAT_TREE.replace("load = 0.1", "load = 0.1\nstart = \"soon\""),
            &[("sources[H1.1.2->*].load", "0.2")],
        )
        .unwrap_err();
        assert_eq!(e.origin, "x.toml");
        let e = with(FAT_TREE, &[("switches[A*].repeat.i", "2")]).unwrap_err();
        assert!(
            e.message
                .contains("'repeat' belongs to the entries as written"),
            "{e}"
        );
        let e = with(FAT_TREE, &[("switches[A*]", "2")]).unwrap_err();
        assert!(
            e.message.contains("cannot replace a whole array entry"),
            "{e}"
        );
    }

    #[test]
    fn a_dict_scenario_takes_deferred_overrides_too() {
        let doc: serde_json::Value = toml::from_str(FAT_TREE).unwrap();
        let sets = vec![("switches[C*].buffer".to_string(), "300KB".to_string())];
        let sc = load(&doc.to_string(), "<dict>", Format::Json, &sets).unwrap();
        let base = with(FAT_TREE, &[]).unwrap();
        assert_ne!(buffer(&sc, "C2.2"), buffer(&base, "C2.2"));
        assert_eq!(buffer(&sc, "E1.1"), buffer(&base, "E1.1"));
    }

    #[test]
    fn selectors_may_contain_dots_and_braces() {
        let steps = parse_path("hosts[C{e}.{j}].repeat.e").unwrap();
        assert_eq!(
            steps,
            [
                Step::Key("hosts".into()),
                Step::Named("C{e}.{j}".into()),
                Step::Key("repeat".into()),
                Step::Key("e".into()),
            ]
        );
        assert!(parse_path("hosts[C1.1.egress").is_err());
    }
}
