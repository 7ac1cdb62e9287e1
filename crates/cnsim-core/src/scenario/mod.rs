//! Scenario files: schema, validation with located errors, overrides.

pub mod build;
mod build_cm;
mod build_transport;
pub mod error;
pub mod overrides;
mod repeat;
pub mod schema;
pub mod spec;
mod topology;

pub use error::ScenarioError;
pub use spec::Scenario;

/// Input format of scenario text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Toml,
    Json,
}

/// Parse and validate scenario text, after applying `key=value` overrides.
pub fn load(
    text: &str,
    origin: &str,
    format: Format,
    overrides: &[(String, String)],
) -> Result<Scenario, ScenarioError> {
    match format {
        Format::Toml => {
            let text = overrides::apply_toml(text, overrides)?;
            build::from_toml(&text, origin)
        }
        Format::Json => {
            let text = overrides::apply_json(text, overrides)?;
            build::from_json(&text, origin)
        }
    }
}

/// Read and validate a scenario file.
pub fn load_file(
    path: &std::path::Path,
    overrides: &[(String, String)],
) -> Result<Scenario, ScenarioError> {
    let origin = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| ScenarioError {
        origin: origin.clone(),
        line_col: None,
        field: String::new(),
        message: format!("cannot read the file: {e}"),
    })?;
    load(&text, &origin, Format::Toml, overrides)
}
