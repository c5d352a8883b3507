//! `checker report` rebuilds run folders' charts and pages and the index of runs;
//! `checker serve` serves the folder of runs on 127.0.0.1 for browsing.

use crate::error::BadInput;
use crate::report::index;
use crate::runner::check_and_report;
use crate::store::folder::{is_run, run_folders, INDEX};
use crate::store::RunFolder;
use anyhow::Context;
use clap::Args;
use std::path::{Path, PathBuf};

/// `checker report`.
#[derive(Debug, Args)]
pub struct ReportArgs {
    /// A run folder, or a folder of runs (`results/`, laid out `<workload>/<stamp>/`).
    #[arg(default_value = "results")]
    pub path: PathBuf,
}

/// `checker serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// The folder of runs to serve.
    #[arg(long, default_value = "results")]
    pub dir: PathBuf,
    /// The port on 127.0.0.1 (0: any free one, printed).
    #[arg(long, default_value_t = 8080)]
    pub port: u16,
}

/// `checker report`: one run folder (and the index of the runs beside it), or every run
/// of a folder of runs and its index. A run that cannot be rendered is named and skipped;
/// the command then fails.
pub fn report(args: ReportArgs) -> anyhow::Result<()> {
    let path = &args.path;
    if !path.is_dir() {
        return Err(BadInput::Usage(format!("{} is not a folder", path.display())).into());
    }
    let (runs, root) = if is_run(path) {
        let root = path.parent().and_then(Path::parent).map(Path::to_path_buf);
        (vec![path.clone()], root)
    } else {
        (run_folders(path), Some(path.clone()))
    };
    let mut failed = Vec::new();
    for run in &runs {
        let folder = RunFolder::open(run);
        match check_and_report(&folder) {
            Ok(results) => println!("{}  {}", results.valid.word(), folder.report().display()),
            Err(e) => {
                eprintln!("{}: {e:#}", run.display());
                failed.push(run.display().to_string());
            }
        }
    }
    if let Some(root) = root.filter(|r| !run_folders(r).is_empty()) {
        println!("index  {}", index::write(&root)?.display());
    }
    if failed.is_empty() {
        Ok(())
    } else {
        anyhow::bail!(
            "could not render {} of {} runs: {}",
            failed.len(),
            runs.len(),
            failed.join(", ")
        )
    }
}

/// `checker serve`: the folder of runs over HTTP on 127.0.0.1, until Ctrl-C.
pub async fn serve(args: ServeArgs) -> anyhow::Result<()> {
    if !args.dir.is_dir() {
        return Err(BadInput::Usage(format!("{} is not a folder", args.dir.display())).into());
    }
    if !run_folders(&args.dir).is_empty() && !args.dir.join(INDEX).is_file() {
        index::write(&args.dir)?;
    }
    let root = std::fs::canonicalize(&args.dir)
        .with_context(|| format!("resolving {}", args.dir.display()))?;
    let app = axum::Router::new()
        .fallback_service(tower_http::services::ServeDir::new(&root))
        .layer(axum::middleware::from_fn_with_state(
            std::sync::Arc::new(root),
            inside_the_folder,
        ));
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", args.port))
        .await
        .with_context(|| format!("listening on 127.0.0.1:{}", args.port))?;
    let addr = listener.local_addr()?;
    println!(
        "serving {} on http://{addr}/ (Ctrl-C or SIGTERM stops)",
        args.dir.display()
    );
    use std::io::Write;
    std::io::stdout().flush()?;
    axum::serve(listener, app)
        .with_graceful_shutdown(crate::shutdown::wait())
        .await
        .context("serving")
}

/// Refuses (403) a request whose file, symlinks resolved, lies outside the folder of runs;
/// `results/latest`, a link to a run inside it, still serves.
async fn inside_the_folder(
    axum::extract::State(root): axum::extract::State<std::sync::Arc<PathBuf>>,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    use axum::response::IntoResponse;
    let path = percent_encoding::percent_decode_str(request.uri().path()).decode_utf8_lossy();
    // What may be served for this path: the file itself (a trailing slash dropped, as the
    // file server drops it), or a folder's index.html.
    let wanted = root.join(path.trim_matches('/'));
    let outside = [wanted.join("index.html"), wanted]
        .iter()
        .filter_map(|p| std::fs::canonicalize(p).ok())
        .any(|real| !real.starts_with(root.as_path()));
    if outside {
        let refused = (
            axum::http::StatusCode::FORBIDDEN,
            "outside the folder of runs\n",
        );
        return refused.into_response();
    }
    next.run(request).await
}
