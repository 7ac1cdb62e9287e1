//! Run a scenario file and print its summary as JSON: `cargo run --release --example run -- FILE [SEED]`.
//! `CNSIM_THREADS=N` splits the run over N threads.
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let Some(path) = args.get(1) else {
        eprintln!("usage: run FILE [SEED]");
        std::process::exit(2);
    };
    let sc = match cnsim_core::scenario::load_file(std::path::Path::new(path), &[]) {
        Ok(sc) => sc,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
    };
    let seed = args.get(2).and_then(|s| s.parse().ok());
    let threads = std::env::var("CNSIM_THREADS")
        .ok()
        .and_then(|t| t.parse().ok())
        .unwrap_or(0);
    let opts = cnsim_core::RunOptions {
        seed,
        threads,
        ..Default::default()
    };
    match cnsim_core::run(&sc, &opts) {
        Ok(r) => println!(
            "{}",
            serde_json::to_string_pretty(&r.summary).expect("serialisable")
        ),
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    }
}
