/* The scheduling loop both executors share: start pending repetitions up to
 * `parallel` at once, collect the finished ones, and cancel everything in
 * flight on Ctrl-C/SIGTERM (which are blocked and waited for, see proc.h). */
#include "bench/proc.h"
#include "bench/run.h"
#include "bench/status_rollup.h"

int pd_exec_run(pd_bench_run *run, int parallel, const pd_executor *ex)
{
    pd_proc_block_signals();
    size_t next = 0;
    int running = 0;
    for (;;) {
        if (pd_proc_poll_interrupt()) {
            ex->cancel(run, ex->ctx);
            return pd_proc_interrupt_status();
        }
        /* the core-hours budget is checked before each start, as IOPS does
         * (budget.h); --fail-fast/--max-fail stop starting (runctl.h) */
        while (running < parallel && next < run->ntasks && !pd_proc_interrupted() && !run->stop_starting &&
               !pd_bench_budget_exhausted(run)) {
            pd_bench_task *t = &run->tasks[next++];
            if (t->state != PD_TASK_PENDING)
                continue;
            pd_bench_task_started(run, t);
            if (ex->start(run, t, ex->ctx) != 0) {
                t->state = pd_proc_interrupted() ? PD_TASK_CANCELLED : PD_TASK_FAILED;
                pd_bench_task_finished(run, t);
                continue;
            }
            running++;
        }
        /* --fail-fast/--max-fail or the budget: what runs finishes, nothing more starts */
        if (running == 0 && (next >= run->ntasks || run->stop_starting || run->budget.stopped))
            return 0;
        pd_status_rollup_flush_due(run->rollup); /* the executors wake at least every second */
        ex->collect(run, &running, ex->ctx);
    }
}
