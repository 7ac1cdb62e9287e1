//! Replicated entries. An entry of `[[switches]]`, `[[hosts]]`, `[[links]]`
//! or `[[sources]]` with `repeat = { e = "edges", j = 2 }` stands for one
//! copy per combination of its variables, each counting from 1 to its count
//! (a literal or a name from `[params]`), with `{e}` and `{j}` replaced in
//! the fields that name things.
//!
//! Expansion is the first step of `Builder::build`, so the copies go through
//! the same validation as entries written out by hand. A copy has no text of
//! its own: its path is its template's (`hosts[2]`) plus a `Seg::Copy`, so
//! its errors point at the template's line and end with "(copy e=3, j=1)".

use super::build::Builder;
use super::entry::{Entries, Entry, MAX_ENTRIES};
use super::error::{unknown_name, FieldPath, ScenarioError};
use super::schema::*;
use serde_json::Value;
use std::collections::BTreeMap;

type NameVisitor<'f> = dyn FnMut(&mut String, FieldPath) -> Result<(), ScenarioError> + 'f;

/// An entry kind that may carry `repeat`.
trait Replicable: Clone {
    fn has_repeat(&self) -> bool;
    fn take_repeat(&mut self) -> Option<RawRepeat>;
    /// Calls `f` on each field that names something (and so may use the
    /// variables), with its path under the entry's path `p`.
    fn visit_names(&mut self, p: &FieldPath, f: &mut NameVisitor) -> Result<(), ScenarioError>;
}

impl Replicable for RawSwitch {
    fn has_repeat(&self) -> bool {
        self.repeat.is_some()
    }
    fn take_repeat(&mut self) -> Option<RawRepeat> {
        self.repeat.take()
    }
    fn visit_names(&mut self, p: &FieldPath, f: &mut NameVisitor) -> Result<(), ScenarioError> {
        visit_opt(&mut self.name, p.key("name"), f)
    }
}

impl Replicable for RawHost {
    fn has_repeat(&self) -> bool {
        self.repeat.is_some()
    }
    fn take_repeat(&mut self) -> Option<RawRepeat> {
        self.repeat.take()
    }
    fn visit_names(&mut self, p: &FieldPath, f: &mut NameVisitor) -> Result<(), ScenarioError> {
        visit_opt(&mut self.name, p.key("name"), f)
    }
}

impl Replicable for RawLink {
    fn has_repeat(&self) -> bool {
        self.repeat.is_some()
    }
    fn take_repeat(&mut self) -> Option<RawRepeat> {
        self.repeat.take()
    }
    fn visit_names(&mut self, p: &FieldPath, f: &mut NameVisitor) -> Result<(), ScenarioError> {
        visit_list(self.between.iter_mut().flatten(), &p.key("between"), f)
    }
}

impl Replicable for RawSource {
    fn has_repeat(&self) -> bool {
        self.repeat.is_some()
    }
    fn take_repeat(&mut self) -> Option<RawRepeat> {
        self.repeat.take()
    }
    fn visit_names(&mut self, p: &FieldPath, f: &mut NameVisitor) -> Result<(), ScenarioError> {
        visit_opt(&mut self.name, p.key("name"), f)?;
        visit_opt(&mut self.host, p.key("host"), f)?;
        match &mut self.to {
            None => Ok(()),
            Some(Destinations::One(n)) => f(n, p.key("to")),
            Some(Destinations::Many(list)) => visit_list(list.iter_mut(), &p.key("to"), f),
        }
    }
}

fn repeats<T: Replicable>(entry: &Option<T>) -> bool {
    entry.as_ref().is_some_and(T::has_repeat)
}

fn visit_opt(
    s: &mut Option<String>,
    p: FieldPath,
    f: &mut NameVisitor,
) -> Result<(), ScenarioError> {
    s.as_mut().map_or(Ok(()), |s| f(s, p))
}

fn visit_list<'s>(
    list: impl Iterator<Item = &'s mut String>,
    p: &FieldPath,
    f: &mut NameVisitor,
) -> Result<(), ScenarioError> {
    list.enumerate().try_for_each(|(k, s)| f(s, p.index(k)))
}

impl Builder<'_> {
    /// Replaces every replicated entry of `raw` by its copies and resolves
    /// `[params]`; what is left is plain entries with their paths.
    pub(super) fn expand(&self, raw: &mut RawScenario) -> Result<Entries, ScenarioError> {
        self.check_no_repeat_in_defaults(raw.defaults.as_ref())?;
        let params = self.params(raw.params.as_ref())?;
        let mut n = 0;
        // A generated topology's entries come first, then the file's own.
        let mut g = self.topology(raw.topology.as_ref(), &params, &mut n)?;
        g.switches
            .extend(self.expand_kind(&mut raw.switches, "switches", &params, &mut n)?);
        g.hosts
            .extend(self.expand_kind(&mut raw.hosts, "hosts", &params, &mut n)?);
        g.links
            .extend(self.expand_kind(&mut raw.links, "links", &params, &mut n)?);
        Ok(Entries {
            switches: g.switches,
            hosts: g.hosts,
            links: g.links,
            sources: self.expand_kind(&mut raw.sources, "sources", &params, &mut n)?,
        })
    }

    fn check_no_repeat_in_defaults(&self, d: Option<&RawDefaults>) -> Result<(), ScenarioError> {
        let Some(d) = d else { return Ok(()) };
        let found = [
            ("switch", repeats(&d.switch)),
            ("host", repeats(&d.host)),
            ("link", repeats(&d.link)),
            ("source", repeats(&d.source)),
        ];
        match found.iter().find(|(_, has)| *has) {
            Some((kind, _)) => Err(self.err(
                &FieldPath::root().key("defaults").key(kind).key("repeat"),
                "'repeat' cannot have a default; set it on each entry to replicate",
            )),
            None => Ok(()),
        }
    }

    fn params(
        &self,
        raw: Option<&BTreeMap<String, Value>>,
    ) -> Result<BTreeMap<String, u64>, ScenarioError> {
        let pp = FieldPath::root().key("params");
        raw.into_iter()
            .flatten()
            .map(|(name, v)| match v.as_u64() {
                Some(n) => Ok((name.clone(), n)),
                None => Err(self.err(
                    &pp.key(name),
                    format!("expected an integer >= 0, found {v}"),
                )),
            })
            .collect()
    }

    fn expand_kind<T: Replicable>(
        &self,
        templates: &mut Vec<T>,
        kind: &str,
        params: &BTreeMap<String, u64>,
        total: &mut u64,
    ) -> Result<Vec<Entry<T>>, ScenarioError> {
        let mut out = Vec::with_capacity(templates.len());
        for (i, mut t) in std::mem::take(templates).into_iter().enumerate() {
            let p = FieldPath::root().key(kind).index(i);
            let repeat = t.take_repeat();
            let vars = match &repeat {
                Some(r) => self.counts(r, &p.key("repeat"), params)?,
                None => Vec::new(),
            };
            // Every name is checked once on the template, so that a bad
            // variable is reported once and even when there are no copies.
            // Without `repeat` too: braces always mark a variable, and a
            // forgotten `repeat` is better reported here than as an
            // unknown node named "C{e}" later.
            let ones: Vec<(&str, u64)> = vars.iter().map(|(v, _)| (v.as_str(), 1)).collect();
            t.clone()
                .visit_names(&p, &mut |s, fp| self.substitute(s, &ones, &fp))?;
            let copies = vars.iter().fold(1u64, |n, (_, c)| n.saturating_mul(*c));
            *total = total.saturating_add(copies);
            if *total > MAX_ENTRIES {
                // Blame `repeat` only where there is one.
                return Err(match repeat {
                    Some(_) => self.err(
                        &p.key("repeat"),
                        format!("expected at most {MAX_ENTRIES} entries in the scenario, found more (this entry makes {copies})"),
                    ),
                    None => self.err(
                        &p,
                        format!("expected at most {MAX_ENTRIES} entries in the scenario, found more (this is entry {total})"),
                    ),
                });
            }
            if repeat.is_none() {
                out.push(Entry { path: p, raw: t });
                continue;
            }
            let mut values: Vec<(&str, u64)> = ones;
            for _ in 0..copies {
                let cp = p.copy(&copy_label(&values));
                let mut c = t.clone();
                c.visit_names(&cp, &mut |s, fp| self.substitute(s, &values, &fp))?;
                out.push(Entry { path: cp, raw: c });
                next_combination(&mut values, &vars);
            }
        }
        Ok(out)
    }

    /// The variables of `repeat` and their counts, in the order of their
    /// names (the first varies slowest).
    fn counts(
        &self,
        repeat: &RawRepeat,
        rp: &FieldPath,
        params: &BTreeMap<String, u64>,
    ) -> Result<Vec<(String, u64)>, ScenarioError> {
        if repeat.is_empty() {
            return Err(self.err(
                rp,
                "expected at least one variable, e.g. repeat = { i = 4 }",
            ));
        }
        repeat
            .iter()
            .map(|(var, v)| {
                let vp = rp.key(var);
                if !is_variable(var) {
                    return Err(self.err(
                        &vp,
                        format!("expected a variable name of lowercase letters, digits and '_' (not starting with a digit), found '{var}'"),
                    ));
                }
                let n = match v {
                    Value::String(name) => *params
                        .get(name)
                        .ok_or_else(|| self.err(&vp, unknown_param(name, params)))?,
                    v => v.as_u64().ok_or_else(|| {
                        self.err(
                            &vp,
                            format!("expected a count (an integer >= 0) or a parameter name, found {v}"),
                        )
                    })?,
                };
                Ok((var.clone(), n))
            })
            .collect()
    }

    /// Replaces each `{var}` in `s` by its value.
    fn substitute(
        &self,
        s: &mut String,
        values: &[(&str, u64)],
        p: &FieldPath,
    ) -> Result<(), ScenarioError> {
        if !s.contains(['{', '}']) {
            return Ok(());
        }
        let mut out = String::with_capacity(s.len());
        let mut rest = s.as_str();
        while let Some(at) = rest.find(['{', '}']) {
            out.push_str(&rest[..at]);
            let after = &rest[at + 1..];
            let close = match (rest.as_bytes()[at], after.find('}')) {
                (b'{', Some(close)) => close,
                (b'{', None) => {
                    return Err(self.err(
                        p,
                        format!("unclosed '{{' in '{s}'; a variable is written {{name}}"),
                    ))
                }
                _ => {
                    return Err(self.err(
                        p,
                        format!("unmatched '}}' in '{s}'; a variable is written {{name}}"),
                    ))
                }
            };
            let var = &after[..close];
            match values.iter().find(|(v, _)| *v == var) {
                Some((_, n)) => out.push_str(&n.to_string()),
                None => return Err(self.err(p, unknown_variable(var, values))),
            }
            rest = &after[close + 1..];
        }
        out.push_str(rest);
        *s = out;
        Ok(())
    }
}

/// `[a-z_][a-z0-9_]*`.
fn is_variable(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_lowercase() || c == '_')
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

pub(super) fn unknown_param(name: &str, params: &BTreeMap<String, u64>) -> String {
    let msg = unknown_name("parameter", name, params.keys());
    if params.is_empty() {
        format!("{msg}; there is no [params] table")
    } else {
        msg
    }
}

fn unknown_variable(var: &str, values: &[(&str, u64)]) -> String {
    if values.is_empty() {
        return format!("unknown variable '{{{var}}}'; this entry has no 'repeat' (braces in a name mark a variable)");
    }
    let names: Vec<&str> = values.iter().map(|(v, _)| *v).collect();
    format!(
        "unknown variable '{{{var}}}'; this entry repeats over {}",
        names.join(", ")
    )
}

/// "e=3, j=1".
fn copy_label(values: &[(&str, u64)]) -> String {
    values
        .iter()
        .map(|(v, n)| format!("{v}={n}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Steps `values` to the next combination, the last variable fastest
/// (an odometer; past the last combination it wraps around to all ones).
fn next_combination(values: &mut [(&str, u64)], vars: &[(String, u64)]) {
    for (value, (_, count)) in values.iter_mut().zip(vars).rev() {
        if value.1 < *count {
            value.1 += 1;
            return;
        }
        value.1 = 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn combinations_run_like_an_odometer() {
        let vars = vec![("a".to_string(), 2), ("b".to_string(), 3)];
        let mut values = vec![("a", 1), ("b", 1)];
        let mut seen = Vec::new();
        for _ in 0..6 {
            seen.push(copy_label(&values));
            next_combination(&mut values, &vars);
        }
        assert_eq!(
            seen,
            ["a=1, b=1", "a=1, b=2", "a=1, b=3", "a=2, b=1", "a=2, b=2", "a=2, b=3"]
        );
    }

    #[test]
    fn variable_names_are_identifiers() {
        assert!(is_variable("e") && is_variable("per_edge2") && is_variable("_x"));
        assert!(!is_variable("E") && !is_variable("2e") && !is_variable("a-b") && !is_variable(""));
    }
}
