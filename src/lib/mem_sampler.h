/* Memory-load sampling with the PMU (Intel PEBS load latency, AMD IBS op):
 * an access profile that changes no page protection.
 *
 * Each task thread opens its own sampling event on its first task begin
 * (perf_event_open, pid 0, cpu -1, PERF_SAMPLE_ADDR, a fixed sample period,
 * precise_ip as high as the PMU takes) with a ring buffer. The
 * event counts only while a task runs on the thread. Its ring is drained at
 * the task's end (before a sync point can read the counts) and every
 * PD_MEM_DRAIN_MS by a drain thread while it runs, so a long task does not
 * fill it. Each sampled data address is charged with pd_sampler_record to
 * the page sampler's region that holds it, for the task the thread runs: the
 * runtime reads one sample table whatever the source, and the page sampler
 * runs with no_protect (no handler, no mprotect).
 *
 * Tested without a PMU: discovery on fake sysfs trees (PADDISER_SYS_ROOT),
 * the parser on byte streams written in the kernel's record layout, and a
 * whole runtime run through a fake perf_event_open/mmap (pd_mem_sampler_set_ops). */
#ifndef PD_LIB_MEM_SAMPLER_H
#define PD_LIB_MEM_SAMPLER_H

#include <linux/perf_event.h>
#include <stddef.h>
#include <stdint.h>

/* What each sample carries: the data address alone, 16 bytes a record with
 * the header. Not the TID (the event is the thread's own, not inherited),
 * nor the weight (load latency: nothing uses it yet), nor DATA_SRC: on
 * Intel CPUs with a mem-loads-aux event (Sapphire Rapids and later) asking
 * for it requires that event as group leader. */
#define PD_MEM_SAMPLE_TYPE PERF_SAMPLE_ADDR
#define PD_MEM_PERIOD 10007      /* loads per sample (a prime: no lock-step with loops); PADDISER_PMU_PERIOD */
#define PD_MEM_RING_PAGES 32     /* data pages per thread (a power of 2; 8192 samples), plus the header page */
#define PD_MEM_DRAIN_MS 10       /* drain thread period */

/* A memory-load sampling event as sysfs describes it. */
typedef struct {
    char name[40];         /* "cpu/mem-loads", "ibs_op": for messages */
    uint32_t type;         /* perf_event_attr.type: the PMU's sysfs type */
    uint64_t config, config1, config2;
    int precise_max, precise_min; /* precise_ip values to try, highest first */
    int kernel_ok;         /* may sample kernel mode too if it cannot exclude it (IBS) */
} pd_mem_event;

/* Finds the event in sysfs, read-only, through pd_sys_path: Intel
 * bus/event_source/devices/{cpu,cpu_core}/events/mem-loads, its terms put
 * into config bits as the PMU's format/ files say; else AMD
 * devices/ibs_op/type. Returns 0, or -1 with why ("no ... event: ..."). */
int pd_mem_event_discover(pd_mem_event *ev, char *why, size_t whylen);

typedef struct {
    uint64_t samples;  /* PERF_RECORD_SAMPLE records read */
    uint64_t charged;  /* ... whose address is in a sampled region */
    uint64_t outside;  /* ... whose address is in none (or no address): dropped */
    uint64_t lost;     /* samples the kernel dropped, from PERF_RECORD_LOST */
    uint64_t other;    /* other records (throttling, ...), skipped */
    uint64_t threads;  /* threads with an open event */
    uint64_t open_failures; /* threads whose event did not open or map (not sampled) */
} pd_mem_stats;

/* Reads the whole records in data[tail, head) of a ring of size bytes (a
 * power of 2; positions are taken modulo size, a record may wrap around the
 * end) written with sample_type (fixed-size fields only: IDENTIFIER, IP,
 * TID, TIME, ADDR, ID, STREAM_ID, CPU, PERIOD, WEIGHT, DATA_SRC), charges
 * each sample's address to task slot
 * (pd_sampler_record) and adds to st. Returns the position after the last
 * whole record: a record that is not all there yet is left for later. */
uint64_t pd_mem_ring_parse(const unsigned char *data, uint64_t size, uint64_t tail, uint64_t head,
                           uint64_t sample_type, int slot, pd_mem_stats *st);

/* The kernel interface, replaceable by tests (pd_mem_sampler_set_ops; NULL
 * restores perf_event_open, mmap, ioctl). map returns the mapping (header
 * page, then the data pages) or NULL with errno. */
typedef struct {
    int (*open)(void *ctx, struct perf_event_attr *attr); /* fd, or -errno */
    void *(*map)(void *ctx, int fd, size_t len);
    void (*unmap)(void *ctx, void *addr, size_t len);
    int (*enable)(void *ctx, int fd, int on);
    void (*close)(void *ctx, int fd);
    void *ctx;
} pd_mem_ops;
void pd_mem_sampler_set_ops(const pd_mem_ops *ops);

/* Checks that the event opens and maps on the calling thread (choosing
 * precise_ip) and starts the drain thread. 0, or -1 with why
 * ("perf_event_open(cpu/mem-loads): Permission denied; ..."). */
int pd_mem_sampler_start(const pd_mem_event *ev, uint64_t period, char *why, size_t whylen);
/* Drains and closes every thread's event. */
void pd_mem_sampler_stop(void);
int pd_mem_sampler_running(void);
/* pthread_atfork handlers (the runtime registers them): the child forgets
 * the parent's events without touching them and has the sampler off. */
void pd_mem_sampler_fork_prepare(void);
void pd_mem_sampler_fork_parent(void);
void pd_mem_sampler_fork_child(void);
uint64_t pd_mem_sampler_period(void);
/* The calling thread starts / stops running task slot: its event is
 * opened on first use, drained, and enabled / disabled. */
void pd_mem_sampler_thread_begin(int slot);
void pd_mem_sampler_thread_end(void);
void pd_mem_sampler_get_stats(pd_mem_stats *st);

#endif
