fn main() {
    use std::mem::size_of;
    println!("Task {}", size_of::<schedlab_model::kernel::sched::Task>());
    println!("Thread {}", size_of::<schedlab_model::workload::Thread>());
    println!(
        "SchedEntity {}",
        size_of::<schedlab_model::kernel::fair::SchedEntity>()
    );
    println!(
        "TaskStats {}",
        size_of::<schedlab_model::kernel::sched::TaskStats>()
    );
    println!("CpuSet {}", size_of::<schedlab_base::CpuSet>());
    println!("Hist {}", size_of::<schedlab_base::LatencyHistogram>());
    println!(
        "TaskSpec {}",
        size_of::<schedlab_model::workload::TaskSpec>()
    );
}
