//! Empirical flow-size distributions: a CDF given as points
//! `size_bytes,cdf_percent`, sampled by inverse transform with linear
//! interpolation between the points (the convention of the traffic
//! generators of the HPCC and pFabric simulators). Two distributions ship
//! with cnsim (`workloads/*.csv`, each file's first line says where it
//! comes from); a user's file in the same form loads too.

use serde::Serialize;

/// The shipped distributions, by name.
const SHIPPED: &[(&str, &str)] = &[
    (
        "websearch",
        include_str!("../../../../workloads/websearch.csv"),
    ),
    (
        "fb_hadoop",
        include_str!("../../../../workloads/fb_hadoop.csv"),
    ),
];

/// Names of the shipped distributions.
pub fn shipped_names() -> impl Iterator<Item = &'static str> {
    SHIPPED.iter().map(|(n, _)| *n)
}

/// The text of a shipped distribution.
pub fn shipped(name: &str) -> Option<&'static str> {
    SHIPPED.iter().find(|(n, _)| *n == name).map(|(_, t)| *t)
}

/// What is wrong with a CDF file, at a 1-based line (0: the whole file).
#[derive(Debug, Clone, PartialEq)]
pub struct CdfError {
    pub line: usize,
    pub message: String,
}

/// A flow-size CDF: sizes non-decreasing, probabilities (fractions)
/// non-decreasing to exactly 1. A first probability above 0 is a point
/// mass at the first size.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SizeCdf {
    /// (size in bytes, cumulative probability in [0, 1]).
    pub points: Vec<(f64, f64)>,
}

impl SizeCdf {
    /// Parse `size_bytes,cdf_percent` lines; blank lines and `#` comments
    /// are skipped, and so is a header line of words.
    pub fn parse(text: &str) -> Result<SizeCdf, CdfError> {
        let mut points: Vec<(f64, f64)> = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let n = i + 1;
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let fields: Vec<&str> = line
                .split(|c: char| c == ',' || c.is_whitespace())
                .filter(|f| !f.is_empty())
                .collect();
            let err = |message: String| CdfError { line: n, message };
            if points.is_empty() && fields.iter().all(|f| f.parse::<f64>().is_err()) {
                continue; // a header
            }
            if fields.len() != 2 {
                return Err(err(format!(
                    "expected two numbers 'size_bytes,cdf_percent', found '{line}'"
                )));
            }
            let num = |f: &str, what: &str| {
                f.parse::<f64>()
                    .ok()
                    .filter(|v| v.is_finite() && *v >= 0.0)
                    .ok_or_else(|| err(format!("expected {what} (a number >= 0), found '{f}'")))
            };
            let size = num(fields[0], "a size in bytes")?;
            let pct = num(fields[1], "a CDF in percent")?;
            if pct > 100.0 {
                return Err(err(format!(
                    "expected a CDF in percent at most 100, found {pct}"
                )));
            }
            if let Some(&(s0, p0)) = points.last() {
                if size < s0 {
                    return Err(err(format!(
                        "expected sizes in increasing order, found {size} after {s0}"
                    )));
                }
                if pct < p0 * 100.0 {
                    return Err(err(format!(
                        "expected a non-decreasing CDF, found {pct} after {}",
                        p0 * 100.0
                    )));
                }
            }
            points.push((size, pct / 100.0));
        }
        match points.last() {
            None => Err(CdfError {
                line: 0,
                message: "expected 'size_bytes,cdf_percent' lines, found none".into(),
            }),
            Some(&(_, p)) if p != 1.0 => Err(CdfError {
                line: 0,
                message: format!(
                    "expected the CDF to end at 100 (percent), found {}",
                    p * 100.0
                ),
            }),
            Some(&(s, _)) if s < 1.0 => Err(CdfError {
                line: 0,
                message: "expected a largest size of at least 1 byte".into(),
            }),
            _ => Ok(SizeCdf { points }),
        }
    }

    /// The size (bytes, at least 1) at cumulative probability `u` in
    /// [0, 1): linear interpolation on the segment that holds `u`.
    pub fn quantile(&self, u: f64) -> u64 {
        let pts = &self.points;
        // The first point whose probability exceeds u.
        let k = pts.partition_point(|&(_, p)| p <= u);
        let size = if k == 0 {
            pts[0].0
        } else if k == pts.len() {
            pts[k - 1].0
        } else {
            let (s0, p0) = pts[k - 1];
            let (s1, p1) = pts[k];
            s0 + (s1 - s0) * (u - p0) / (p1 - p0)
        };
        (size.round() as u64).max(1)
    }

    /// Mean size in bytes of the interpolated distribution.
    pub fn mean(&self) -> f64 {
        let pts = &self.points;
        let mut mean = pts[0].0 * pts[0].1;
        for w in pts.windows(2) {
            mean += (w[1].1 - w[0].1) * (w[0].0 + w[1].0) / 2.0;
        }
        mean
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shipped_distributions_load_with_their_means() {
        let web = SizeCdf::parse(shipped("websearch").unwrap()).unwrap();
        // Segment by segment: 0.15 × 5 KB + 0.05 × 15 KB + ... + 0.03 × 20 MB.
        assert!((web.mean() - 1_711_250.0).abs() < 1e-6, "{}", web.mean());
        let hadoop = SizeCdf::parse(shipped("fb_hadoop").unwrap()).unwrap();
        assert_eq!(hadoop.points.len(), 20);
        assert_eq!(hadoop.points[19], (10_000_000.0, 1.0));
    }

    #[test]
    fn quantiles_interpolate_linearly_between_points() {
        let c = SizeCdf::parse("0,0\n1000,50\n3000,100\n").unwrap();
        assert_eq!(c.quantile(0.0), 1); // size 0 rounds up to one byte
        assert_eq!(c.quantile(0.25), 500);
        assert_eq!(c.quantile(0.5), 1000);
        assert_eq!(c.quantile(0.75), 2000);
        assert_eq!(c.quantile(0.999_999), 3000);
        assert_eq!(c.mean(), 0.5 * 500.0 + 0.5 * 2000.0);
    }

    #[test]
    fn a_first_probability_above_zero_is_a_point_mass() {
        let c = SizeCdf::parse("100,40\n200,100\n").unwrap();
        assert_eq!(c.quantile(0.1), 100);
        assert_eq!(c.quantile(0.39), 100);
        assert_eq!(c.quantile(0.7), 150);
        assert!((c.mean() - (0.4 * 100.0 + 0.6 * 150.0)).abs() < 1e-9);
    }

    #[test]
    fn bad_files_name_the_line() {
        let e = SizeCdf::parse("# c\n0,0\n500,60\n400,70\n").unwrap_err();
        assert_eq!(e.line, 4);
        assert!(e.message.contains("increasing"), "{}", e.message);
        let e = SizeCdf::parse("0,0\n500,60\n600,50\n").unwrap_err();
        assert_eq!(e.line, 3);
        let e = SizeCdf::parse("0,0\n500,x\n").unwrap_err();
        assert_eq!(e.line, 2);
        assert!(e.message.contains("found 'x'"), "{}", e.message);
        let e = SizeCdf::parse("0,0\n500,90\n").unwrap_err();
        assert_eq!(e.line, 0);
        assert!(e.message.contains("end at 100"), "{}", e.message);
        assert_eq!(
            SizeCdf::parse("size,cdf\n0,0\n10,100\n")
                .unwrap()
                .points
                .len(),
            2
        );
    }
}
