//! Measures text-scan throughput on ~20 MB of generated, realistic skill text.
//! Run with `cargo run --release -p skill-guard --example throughput`.

use std::hint::black_box;
use std::time::Instant;

use skill_guard::{ScanScope, scan_text};

const TARGET_BYTES: usize = 20 * 1024 * 1024;

const TOPICS: &[&str] = &[
    "deploy-k8s",
    "release-notes",
    "postgres-backup",
    "rust-ci",
    "pdf-extract",
    "api-client",
    "log-triage",
    "terraform-plan",
    "docs-site",
    "python-env",
];

const PARAGRAPHS: &[&str] = &[
    "Use this skill when the user asks to {t} for a service. Start by reading the project README and the\nexisting configuration so the change fits the conventions already in place.\n",
    "Keep changes small and reversible. Before touching production, run the same steps against the\nstaging environment and compare the output with the previous run.\n",
    "If a command fails, read the whole error message before retrying. Most failures come from a missing\nenvironment variable or an outdated lock file, not from the tool itself.\n",
    "## Steps\n\n1. Check the current state with `git status` and `git log --oneline -5`.\n2. Create a branch named after the ticket.\n3. Apply the change and run the test suite.\n4. Summarise what changed for the user.\n",
    "```bash\ncargo build --workspace\ncargo test --workspace -- --nocapture\ncargo clippy --all-targets -- -D warnings\n```\n",
    "```bash\nkubectl rollout status deployment/{t} -n staging\nkubectl get pods -l app={t} -o wide\nhelm diff upgrade {t} ./chart -f values.yaml\n```\n",
    "```python\nimport json\nimport os\n\ndef load_config(path):\n    with open(path) as fh:\n        return json.load(fh)\n\nBASE_URL = os.environ.get(\"SERVICE_URL\", \"http://localhost:8080\")\n```\n",
    "Call the API with the token from the environment:\n\n```bash\ncurl -sS -H \"Authorization: Bearer $GITHUB_TOKEN\" https://api.github.com/repos/acme/{t}/pulls\n```\n",
    "Install the helpers once:\n\n```bash\npip install requests rich\nnpm install --save-dev prettier\nsudo apt-get install -y jq\n```\n",
    "| Option | Meaning |\n|---|---|\n| `--dry-run` | print the plan without applying it |\n| `--since` | only consider commits after this date |\n| `--format` | `json` or `text` |\n",
    "Backups run nightly. To restore one, stop the writer, copy the dump into place and start the\nservice again. Verify the row counts afterwards and report any table that differs by more than 1%.\n",
    "When the user wants a summary, lead with the outcome, then the evidence, then the open questions.\nAvoid pasting long logs; quote the three or four lines that matter and link to the rest.\n",
];

fn document(seed: usize) -> String {
    let topic = TOPICS[seed % TOPICS.len()];
    let mut doc = format!(
        "---\nname: {topic}-{seed}\ndescription: Helps with {topic} tasks for project number {seed}.\n---\n\n# {topic}\n\n"
    );
    let mut i = seed;
    while doc.len() < 8 * 1024 {
        // A cheap deterministic shuffle keeps documents varied.
        i = i.wrapping_mul(2_654_435_761).wrapping_add(12_345);
        let para = PARAGRAPHS[(i >> 7) % PARAGRAPHS.len()];
        doc.push_str(&para.replace("{t}", topic));
        doc.push('\n');
    }
    doc
}

fn main() {
    let mut docs = Vec::new();
    let mut total = 0usize;
    while total < TARGET_BYTES {
        let d = document(docs.len());
        total += d.len();
        docs.push(d);
    }
    // Warm up: a fresh process scans through literal gates and, after its
    // first 128 KiB, compiles the full pattern set on another thread. One
    // untimed pass gets past that, so the timed pass measures the steady state.
    let cold = Instant::now();
    for d in &docs {
        black_box(scan_text(d, "SKILL.md", ScanScope::Skill));
    }
    let cold = cold.elapsed().as_secs_f64();

    let start = Instant::now();
    let mut findings = 0usize;
    for d in &docs {
        findings += black_box(scan_text(d, "SKILL.md", ScanScope::Skill)).len();
    }
    let secs = start.elapsed().as_secs_f64();
    let mb = total as f64 / (1024.0 * 1024.0);
    println!(
        "scanned {mb:.1} MiB in {} documents in {secs:.3} s: {:.1} MiB/s ({findings} findings)",
        docs.len(),
        mb / secs
    );
    println!("the same documents as the first scans of a fresh process: {cold:.3} s");
}
