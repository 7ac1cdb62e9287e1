//! cnsim-core: a discrete-event simulator for congestion management in
//! data-center Ethernet. Integer picosecond time, one event heap, arenas with
//! typed ids, a random stream per component.

pub mod cm;
pub mod engine;
pub mod flowctl;
pub mod metrics;
pub mod net;
pub mod results;
pub mod scenario;
pub mod sim;
pub mod traffic;
pub mod transport;
pub mod units;

pub use results::{RunResult, Summary};
pub use scenario::{Format, Scenario, ScenarioError};
pub use sim::{run, Progress, RunError, RunOptions};
