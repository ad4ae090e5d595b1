//! The one line format the `cargo xtask bench` harness parses from ignored
//! timing tests: `BENCH name=<median> ms min=… max=… n=…`.

use std::time::Duration;

/// Prints the median, minimum and maximum of `samples` in that format.
pub fn print_bench(name: &str, mut samples: Vec<Duration>) {
    if samples.is_empty() {
        println!("BENCH {name}=nan ms n=0");
        return;
    }
    samples.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    println!(
        "BENCH {name}={:.4} ms min={:.4} max={:.4} n={}",
        ms(samples[samples.len() / 2]),
        ms(samples[0]),
        ms(samples[samples.len() - 1]),
        samples.len()
    );
}
