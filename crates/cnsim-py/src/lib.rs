//! `cnsim._core`: the Python face of cnsim-core. Conversion only: text in,
//! summary JSON and numpy matrices out, the GIL released while simulating.

mod columns;

use cnsim_core::scenario::{self, Format};
use cnsim_core::{RunError, RunOptions};
use columns::Columns;
use numpy::{PyArray1, PyArrayMethods};
use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

create_exception!(
    _core,
    ScenarioError,
    PyException,
    "The scenario is invalid; the message names file, line, field, expected and found."
);
create_exception!(
    _core,
    SimulationError,
    PyException,
    "The simulation could not complete (for example, it was cancelled)."
);

/// A handle to watch a run from another thread and to cancel it.
#[pyclass(frozen)]
struct Progress(Arc<cnsim_core::Progress>);

#[pymethods]
impl Progress {
    #[new]
    fn new() -> Self {
        Progress(Arc::default())
    }
    #[getter]
    fn sim_time_s(&self) -> f64 {
        self.0.sim_time_ps.load(Ordering::Relaxed) as f64 * 1e-12
    }
    #[getter]
    fn duration_s(&self) -> f64 {
        self.0.duration_ps.load(Ordering::Relaxed) as f64 * 1e-12
    }
    #[getter]
    fn events(&self) -> u64 {
        self.0.events.load(Ordering::Relaxed)
    }
    fn cancel(&self) {
        self.0.cancel.store(true, Ordering::Relaxed);
    }
}

fn format_of(fmt: &str) -> PyResult<Format> {
    match fmt {
        "toml" => Ok(Format::Toml),
        "json" => Ok(Format::Json),
        other => Err(pyo3::exceptions::PyValueError::new_err(format!(
            "fmt must be 'toml' or 'json', found '{other}'"
        ))),
    }
}

fn load(
    text: &str,
    origin: &str,
    overrides: &[(String, String)],
    fmt: &str,
) -> PyResult<cnsim_core::Scenario> {
    scenario::load(text, origin, format_of(fmt)?, overrides)
        .map_err(|e| ScenarioError::new_err(e.to_string()))
}

/// Validate scenario text; return a JSON description of the resolved scenario.
#[pyfunction]
#[pyo3(signature = (text, origin, overrides = Vec::new(), fmt = "toml"))]
fn validate(
    text: &str,
    origin: &str,
    overrides: Vec<(String, String)>,
    fmt: &str,
) -> PyResult<String> {
    Ok(load(text, origin, &overrides, fmt)?.describe().to_string())
}

/// How often a run on the main thread lets Python handle its signals.
const SIGNAL_POLL: Duration = Duration::from_millis(50);

/// Runs the engine on the calling thread with the GIL released. On the main
/// thread (the only one Python delivers signals to) the engine's periodic
/// check takes the GIL at most every `SIGNAL_POLL` to let Python handle
/// signals; a pending one (Ctrl-C: KeyboardInterrupt) cancels the run and
/// its exception is what the caller gets. Releasing the GIL for the whole
/// run without this would leave a Ctrl-C pending until the end, to fire
/// later inside unrelated calls. The engine stays on the caller's thread:
/// a thread of its own, waited on, ran up to a quarter slower on a 2-core
/// machine when the scheduler moved it between cores.
fn run_interruptible(
    py: Python<'_>,
    sc: &cnsim_core::Scenario,
    mut opts: RunOptions,
) -> PyResult<cnsim_core::RunResult> {
    let signal: Arc<Mutex<Option<PyErr>>> = Arc::default();
    if is_main_thread(py)? {
        let started = Instant::now();
        let next_ms = AtomicU64::new(0);
        let pending = signal.clone();
        opts.poll = Some(Arc::new(move || {
            let now_ms = started.elapsed().as_millis() as u64;
            if now_ms < next_ms.load(Ordering::Relaxed) {
                return false;
            }
            next_ms.store(now_ms + SIGNAL_POLL.as_millis() as u64, Ordering::Relaxed);
            Python::attach(|py| match py.check_signals() {
                Ok(()) => false,
                Err(e) => {
                    *pending.lock().unwrap_or_else(|p| p.into_inner()) = Some(e);
                    true
                }
            })
        }));
    }
    let outcome = py.detach(|| {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| cnsim_core::run(sc, &opts)))
    });
    if let Some(e) = signal.lock().unwrap_or_else(|p| p.into_inner()).take() {
        return Err(e);
    }
    match outcome {
        Ok(result) => result.map_err(|e: RunError| SimulationError::new_err(e.to_string())),
        Err(panic) => {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_default();
            Err(SimulationError::new_err(format!(
                "internal error: the engine stopped unexpectedly ({what}); please report it with the scenario"
            )))
        }
    }
}

/// Whether this is the interpreter's main thread.
fn is_main_thread(py: Python<'_>) -> PyResult<bool> {
    let threading = py.import("threading")?;
    let main = threading.call_method0("main_thread")?;
    let current = threading.call_method0("current_thread")?;
    Ok(main.is(&current))
}

/// The text of a scenario file, with the engine's rules for what is read
/// (`scenario::input`): a missing file raises FileNotFoundError, anything
/// else refused or unreadable a ScenarioError naming the path.
#[pyfunction]
fn read_scenario(path: std::path::PathBuf) -> PyResult<String> {
    use cnsim_core::scenario::input::FileErrorKind;
    scenario::read_file(&path).map_err(|e| match e.kind {
        FileErrorKind::NotFound => pyo3::exceptions::PyFileNotFoundError::new_err((
            2,
            "No such file or directory",
            path.display().to_string(),
        )),
        _ => ScenarioError::new_err(e.to_string()),
    })
}

/// Why `name` may not be a name (it has control characters), or None: the
/// engine's rule for names, for those the Python package takes itself
/// (sweep variants).
#[pyfunction]
fn name_error(name: &str) -> Option<String> {
    scenario::names::check(name).err()
}

/// The JSON Schema of the scenario format (`scenario::json_schema`), as
/// JSON text.
#[pyfunction]
fn scenario_schema() -> String {
    scenario::scenario_schema()
}

fn matrix<'py, T: numpy::Element>(
    py: Python<'py>,
    data: Vec<T>,
    rows: usize,
    cols: usize,
) -> PyResult<Bound<'py, PyAny>> {
    Ok(PyArray1::from_vec(py, data)
        .reshape([rows, cols])?
        .into_any())
}

/// A numpy element type of a series matrix, by its numpy name.
trait Dtype: numpy::Element {
    const NAME: &'static str;
}
impl Dtype for u64 {
    const NAME: &'static str = "uint64";
}
impl Dtype for f64 {
    const NAME: &'static str = "float64";
}

/// What the rows of a series matrix are.
#[derive(Clone, Copy)]
enum Rows {
    Flows,
    /// The source flows that had a rate limiter (`flow_rl_flows`).
    Limiters,
    Queues,
    /// Shared-buffer switches, in the order of the summary's `buffers`.
    Buffers,
    /// Switch ingress (port, class) queues, in the order of the summary's
    /// `ingress`.
    Ingress,
}

impl Rows {
    const fn name(self) -> &'static str {
        match self {
            Rows::Flows => "flows",
            Rows::Limiters => "limiters",
            Rows::Queues => "queues",
            Rows::Buffers => "buffers",
            Rows::Ingress => "ingress",
        }
    }
}

/// Declares the binned series `run` returns: for each, its name (the
/// `Series` field it comes from), whether its rows are flows or queues,
/// and its element type (checked against the field's). From the one list
/// come `SERIES`, exported for results.py, and `set_series`, which puts
/// the matrices in `run`'s dict; adding a series is one line here.
macro_rules! series {
    ($($name:ident: $rows:ident, $dtype:ty;)*) => {
        /// (name, what its rows are: "flows", "limiters", "queues", "buffers" or
        /// "ingress", numpy dtype) of each series, in order.
        const SERIES: &[(&str, &str, &str)] =
            &[$((stringify!($name), Rows::$rows.name(), <$dtype as Dtype>::NAME)),*];

        /// Each series as a rows × bins matrix. A series the engine left
        /// empty (a scheme or transport the run does not have) has no rows.
        fn set_series(
            out: &Bound<'_, PyDict>,
            s: cnsim_core::results::Series,
            flows: usize,
            limiters: usize,
            queues: usize,
            buffers: usize,
            ingress: usize,
        ) -> PyResult<()> {
            let py = out.py();
            $(
                let values: Vec<$dtype> = s.$name;
                let rows = match (values.is_empty(), Rows::$rows) {
                    (true, _) => 0,
                    (false, Rows::Flows) => flows,
                    (false, Rows::Limiters) => limiters,
                    (false, Rows::Queues) => queues,
                    (false, Rows::Buffers) => buffers,
                    (false, Rows::Ingress) => ingress,
                };
                out.set_item(stringify!($name), matrix(py, values, rows, s.n_bins)?)?;
            )*
            Ok(())
        }
    };
}

series! {
    flow_tx_bytes: Flows, u64;
    flow_rx_bytes: Flows, u64;
    queue_tx_bytes: Queues, u64;
    queue_occ_mean: Queues, f64;
    queue_occ_max: Queues, u64;
    queue_drops: Queues, u64;
    queue_xoff: Queues, u64;
    flow_rl_rate_mean: Limiters, f64;
    flow_rl_occ_mean: Limiters, f64;
    flow_rl_occ_max: Limiters, u64;
    flow_rl_target_mean: Limiters, f64;
    flow_alpha_mean: Flows, f64;
    flow_cwnd_mean: Flows, f64;
    flow_retransmissions: Flows, u64;
    flow_timeouts: Flows, u64;
    buffer_shared_mean: Buffers, f64;
    buffer_shared_max: Buffers, u64;
    buffer_headroom_mean: Buffers, f64;
    buffer_headroom_max: Buffers, u64;
    ingress_occ_mean: Ingress, f64;
    ingress_occ_max: Ingress, u64;
}

/// Run a scenario. Returns the summary (JSON) and the binned series as numpy matrices.
// The keyword arguments of the Python signature, one each.
#[allow(clippy::too_many_arguments)]
#[pyfunction]
#[pyo3(signature = (text, origin, overrides = Vec::new(), fmt = "toml", seed = None, progress = None, max_events = None, max_wall_s = None, checks = true, threads = 0))]
fn run<'py>(
    py: Python<'py>,
    text: &str,
    origin: &str,
    overrides: Vec<(String, String)>,
    fmt: &str,
    seed: Option<u64>,
    progress: Option<Bound<'py, Progress>>,
    max_events: Option<u64>,
    max_wall_s: Option<f64>,
    checks: bool,
    threads: usize,
) -> PyResult<Bound<'py, PyDict>> {
    let sc = load(text, origin, &overrides, fmt)?;
    let opts = RunOptions {
        seed,
        // Always a handle: it is how a signal cancels the run.
        progress: Some(progress.map_or_else(Default::default, |p| p.get().0.clone())),
        max_events,
        max_wall: max_wall_s
            .map(|s| {
                std::time::Duration::try_from_secs_f64(s).map_err(|_| {
                    pyo3::exceptions::PyValueError::new_err(format!(
                        "max_wall_s: expected a number of seconds >= 0, found {s}"
                    ))
                })
            })
            .transpose()?,
        no_checks: !checks,
        poll: None,
        threads,
    };
    let mut result = run_interruptible(py, &sc, opts)?;
    // The per-flow and per-queue records go as columns, not in the summary.
    let flows = std::mem::take(&mut result.summary.flows);
    let qs = std::mem::take(&mut result.summary.queues);
    let summary = serde_json::to_string(&result.summary)
        .map_err(|e| SimulationError::new_err(e.to_string()))?;
    let mut s = result.series;
    // Rows of the limiter series: the flows that had a limiter.
    let rl_flows = std::mem::take(&mut s.flow_rl_flows);
    let n_limiters = rl_flows.len();
    // Rows of the flow series: the sources' flows, then one per workload.
    let n_flows = flows.len() + result.summary.workloads.len();
    let n_queues = result.queues.len();
    let out = PyDict::new(py);
    out.set_item("summary", summary)?;
    out.set_item("bin_s", s.bin.as_secs_f64())?;
    out.set_item("n_bins", s.n_bins)?;
    out.set_item("flow_rl_flows", PyArray1::from_vec(py, rl_flows))?;
    out.set_item("flows", columns_of(py, &flows)?)?;
    drop(flows);
    out.set_item("queues", columns_of(py, &qs)?)?;
    if result.summary.pfc.is_some() {
        let ev = &result.pfc_events;
        let pfc = PyDict::new(py);
        pfc.set_item(
            "time_s",
            ev.iter().map(|e| e.time.as_secs_f64()).collect::<Vec<_>>(),
        )?;
        pfc.set_item(
            "queue",
            ev.iter()
                .map(|e| qs[e.port as usize].name.clone())
                .collect::<Vec<_>>(),
        )?;
        pfc.set_item(
            "node",
            ev.iter()
                .map(|e| qs[e.port as usize].node.clone())
                .collect::<Vec<_>>(),
        )?;
        pfc.set_item(
            "class",
            ev.iter().map(|e| e.class as u32).collect::<Vec<_>>(),
        )?;
        pfc.set_item("quanta", ev.iter().map(|e| e.quanta).collect::<Vec<_>>())?;
        pfc.set_item(
            "direction",
            ev.iter()
                .map(|e| match e.direction {
                    cnsim_core::results::PfcDirection::Sent => "sent",
                    cnsim_core::results::PfcDirection::Received => "received",
                })
                .collect::<Vec<_>>(),
        )?;
        out.set_item("pfc_events", pfc)?;
    }
    if !result.summary.workloads.is_empty() {
        out.set_item(
            "workload_flows",
            workload_flows(py, &result.workload_flows, &result.summary.workloads)?,
        )?;
    }
    let n_buffers = result.summary.buffers.len();
    let n_ingress = result.summary.ingress.len();
    set_series(&out, s, n_flows, n_limiters, n_queues, n_buffers, n_ingress)?;
    Ok(out)
}

/// The workload flows as columns (one list per column): names, size and
/// times (seconds; NaN: never finished), and the counters of a connection.
fn workload_flows<'py>(
    py: Python<'py>,
    w: &[cnsim_core::results::WorkloadFlow],
    names: &[cnsim_core::results::WorkloadSummary],
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    let secs = |t: cnsim_core::units::Time| t.as_secs_f64();
    d.set_item("name", w.iter().map(|f| f.name.clone()).collect::<Vec<_>>())?;
    d.set_item(
        "workload",
        w.iter()
            .map(|f| names[f.record.workload as usize].name.clone())
            .collect::<Vec<_>>(),
    )?;
    d.set_item("src", w.iter().map(|f| f.src.clone()).collect::<Vec<_>>())?;
    d.set_item("dst", w.iter().map(|f| f.dst.clone()).collect::<Vec<_>>())?;
    d.set_item(
        "transport",
        w.iter()
            .map(|f| match names[f.record.workload as usize].transport {
                cnsim_core::transport::Transport::Tcp => "tcp",
                cnsim_core::transport::Transport::Roce => "roce",
                cnsim_core::transport::Transport::Udp => "udp",
            })
            .collect::<Vec<_>>(),
    )?;
    // As integers: a Vec<u8> would become one Python bytes object, which
    // pandas repeats on every row (and Parquet writes n times: n² bytes).
    d.set_item(
        "priority",
        w.iter()
            .map(|f| u32::from(f.record.priority))
            .collect::<Vec<_>>(),
    )?;
    d.set_item(
        "size_bytes",
        w.iter().map(|f| f.record.size).collect::<Vec<_>>(),
    )?;
    d.set_item(
        "start_s",
        w.iter().map(|f| secs(f.record.start)).collect::<Vec<_>>(),
    )?;
    d.set_item(
        "finish_s",
        w.iter()
            .map(|f| f.record.finish.map_or(f64::NAN, secs))
            .collect::<Vec<_>>(),
    )?;
    d.set_item(
        "fct_s",
        w.iter()
            .map(|f| f.fct().map_or(f64::NAN, secs))
            .collect::<Vec<_>>(),
    )?;
    d.set_item(
        "ideal_fct_s",
        w.iter().map(|f| secs(f.record.ideal)).collect::<Vec<_>>(),
    )?;
    // Every counter a source's flow has, by the same names, in the order of
    // the names (as results have always had them).
    let counters: Vec<_> = w.iter().map(|f| f.counters).collect();
    let mut counters =
        Columns::of(&counters).map_err(|e| SimulationError::new_err(e.to_string()))?;
    counters.sort_by_name();
    counters.into_dict(&d)?;
    Ok(d)
}

/// Records as a dict of columns (see `columns`).
fn columns_of<'py, T: serde::Serialize>(
    py: Python<'py>,
    records: &[T],
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    Columns::of(records)
        .map_err(|e| SimulationError::new_err(e.to_string()))?
        .into_dict(&d)?;
    Ok(d)
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("ENGINE_ID", cnsim_core::results::ENGINE_ID)?;
    m.add("BUILD", cnsim_core::results::BUILD)?;
    m.add("ScenarioError", m.py().get_type::<ScenarioError>())?;
    m.add("SimulationError", m.py().get_type::<SimulationError>())?;
    m.add("SERIES", pyo3::types::PyTuple::new(m.py(), SERIES)?)?;
    m.add_class::<Progress>()?;
    // Load numpy's C API now: loading it lazily, at a run's first result
    // matrix, imports Python code, where a pending Ctrl-C would surface as
    // a panic instead of a KeyboardInterrupt.
    PyArray1::<f64>::zeros(m.py(), 0, false);
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    m.add_function(wrap_pyfunction!(read_scenario, m)?)?;
    m.add_function(wrap_pyfunction!(name_error, m)?)?;
    m.add_function(wrap_pyfunction!(scenario_schema, m)?)?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    Ok(())
}
