//! Scenario files: schema, validation with located errors, overrides.

pub mod budget;
pub mod build;
mod build_classes;
mod build_cm;
mod build_network;
mod build_output;
mod build_traffic;
mod build_transport;
mod build_workloads;
mod describe;
mod entry;
pub mod error;
pub mod input;
pub mod json_schema;
pub mod names;
pub mod overrides;
mod repeat;
pub mod schema;
pub mod spec;
mod topology;

pub use error::ScenarioError;
pub use input::{read_file, MAX_FILE_BYTES};
pub use spec::Scenario;

/// The JSON Schema of scenario files (see `json_schema`).
pub fn scenario_schema() -> String {
    json_schema::schema_of::<schema::RawScenario>()
}

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
        Format::Toml => build::from_toml(text, origin, overrides),
        Format::Json => {
            let (text, applied, deferred) = overrides::apply_json(text, overrides)?;
            build::from_json(&text, origin, applied, &deferred)
        }
    }
}

/// Read (see `input::read_file`) and validate a scenario file.
pub fn load_file(
    path: &std::path::Path,
    overrides: &[(String, String)],
) -> Result<Scenario, ScenarioError> {
    let text = read_file(path)?;
    load(&text, &path.display().to_string(), Format::Toml, overrides)
}
