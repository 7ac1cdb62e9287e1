//! H1 -- SW -- H2 with every link at 10 Gb/s: the two-hop line that the
//! engine's tests and benchmarks run on, as scenario text. Plain text, with
//! nothing from cnsim, so that unit tests and benchmarks can include it too.

/// The line's parameters. Each `&str` beyond the first three is TOML added
/// to its part of the file: `top` to the top-level keys, `switch`, `h1`,
/// `h2` and `source` to that entry's keys, `sections` as whole sections at
/// the end.
pub struct Line<'a> {
    pub duration: &'a str,
    /// Propagation delay of each link.
    pub delay: &'a str,
    /// The switch's store-and-forward latency.
    pub latency: &'a str,
    pub top: &'a str,
    pub switch: &'a str,
    pub h1: &'a str,
    pub h2: &'a str,
    /// Keys of H1's one source to H2.
    pub source: &'a str,
    pub sections: &'a str,
}

impl Default for Line<'_> {
    fn default() -> Self {
        Line {
            duration: "10ms",
            delay: "0.5us",
            latency: "1us",
            top: "",
            switch: "",
            h1: "",
            h2: "",
            source: "",
            sections: "",
        }
    }
}

impl Line<'_> {
    pub fn toml(&self) -> String {
        let Line {
            duration,
            delay,
            latency,
            top,
            switch,
            h1,
            h2,
            source,
            sections,
        } = self;
        format!(
            r#"
duration = "{duration}"
{top}
[defaults.link]
rate = "10Gbps"
delay = "{delay}"
[[switches]]
name = "SW"
latency = "{latency}"
{switch}
[[hosts]]
name = "H1"
{h1}
[[hosts]]
name = "H2"
{h2}
[[links]]
between = ["H1", "SW"]
[[links]]
between = ["SW", "H2"]
[[sources]]
host = "H1"
to = "H2"
{source}
{sections}
"#
        )
    }
}
