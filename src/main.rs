//! `cohort`: a Kafka-compatible broker whose heart is a replicated group coordinator.

fn main() {
    println!("cohort {}", env!("CARGO_PKG_VERSION"));
}
