/* paddiser run [options] -- PROGRAM ARGS...: runs an unmodified,
 * dynamically linked program under the runtime by preloading
 * libpaddiser-preload.so (or libpaddiser-preload-mpi.so for a program
 * linked with libmpi). Options become the environment variables the
 * runtime and the preload library read, so they also reach the program's
 * children (MPI ranks, exec'd helpers). */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/commands.h"
#include "common/cliopt.h"
#include "common/util.h"
#include "pd_paths.h"

#define CMD "paddiser run"
#define PRELOAD_LIB "libpaddiser-preload.so"
#define PRELOAD_MPI_LIB "libpaddiser-preload-mpi.so"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: paddiser run [options] -- PROGRAM [ARGS...]\n\n"
            "Runs an unmodified, dynamically linked PROGRAM under libpaddiser: its large\n"
            "allocations are the data objects (named by allocation site), OpenMP parallel\n"
            "regions and MPI ranks the tasks, and pages are placed at sync points.\n\n"
            "options (each also settable by the environment variable shown):\n"
            "      --fast-capacity SIZE  fast-memory bytes to distribute (PADDISER_FAST_CAPACITY);\n"
            "                            SIZE in bytes or with K, M, G (binary) suffix\n"
            "      --backend KIND        auto, none, sim or numa (PADDISER_BACKEND)\n"
            "      --planner KIND        exact or greedy (PADDISER_PLANNER)\n"
            "      --min-bytes SIZE      allocations tracked from this size, default 1M\n"
            "                            (PADDISER_RUN_MIN_BYTES)\n"
            "      --keep-freed SIZE     freed tracked blocks kept, up to SIZE bytes in all, for\n"
            "                            the next tracked allocation they fit (same pages, no\n"
            "                            first touches); default an eighth of RAM, 0: none\n"
            "                            (PADDISER_RUN_KEEP_FREED)\n"
            "      --sync-every N        parallel regions per sync point, default 1\n"
            "                            (PADDISER_RUN_SYNC_EVERY)\n"
            "      --region-cost PCT     a region whose task calls and sync point cost more\n"
            "                            than PCT%% of its own time runs untracked after its\n"
            "                            first 4 instances (tried again at 2x, 4x ... that\n"
            "                            count, in case it grew), default 10; 0: never\n"
            "                            (PADDISER_RUN_REGION_COST_PCT)\n"
            "      --regions GLOBS       only these parallel regions are tasks: comma-separated\n"
            "                            globs on '<module>+0x<offset>' (as -v prints) or the\n"
            "                            symbol (PADDISER_RUN_REGIONS)\n"
            "      --hints FILE          '<site-or-name-glob> <pattern> [elem_size] [stride]'\n"
            "                            lines (PADDISER_RUN_HINTS)\n"
            "      --sampler KIND        pmu (default), mprotect or auto (PADDISER_SAMPLER): pmu\n"
            "                            samples loads with the PMU and never protects a page (no\n"
            "                            access profile where the PMU does not allow it); mprotect\n"
            "                            samples by page protection, under which a system call that\n"
            "                            reads into or writes from a sampled page fails with EFAULT\n"
            "      --out DIR             write DIR/tasks.csv, DIR/plan.log and DIR/objects.csv\n"
            "                            at exit (PADDISER_RUN_OUT; appended to)\n"
            "      --profile-store FILE  keep each task's time by input size, its memory-bound\n"
            "                            fraction and its heat in FILE across runs\n"
            "                            (PADDISER_PROFILE_STORE)\n"
            "  -v, --verbose             one line per hook decision, and the runtime's notes\n"
            "                            (PADDISER_RUN_VERBOSE; otherwise PADDISER_QUIET=1)\n"
            "  -h, --help                this help\n\n"
            "The preload library is looked up beside the paddiser binary (build tree),\n"
            "then in " PD_LIBDIR ". Exit status: PROGRAM's, or 2 when it cannot start.\n");
}

/* Bytes, or a number with a K, M or G suffix (KiB, MiB, GiB). */
static int parse_size(const char *s, unsigned long long *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (end == s || errno || *s == '-')
        return 0;
    unsigned shift = 0;
    if (*end) {
        switch (*end == 'k' ? 'K' : *end == 'm' ? 'M' : *end == 'g' ? 'G' : *end) {
        case 'K': shift = 10; break;
        case 'M': shift = 20; break;
        case 'G': shift = 30; break;
        default: return 0;
        }
        end++;
        if (*end == 'i')
            end++;
        if (*end == 'B')
            end++;
        if (*end)
            return 0;
    }
    if (shift && v > (~0ull >> shift))
        return 0;
    *out = v << shift;
    return 1;
}

static int set_env(const char *name, const char *value)
{
    if (setenv(name, value, 1) == 0)
        return 0;
    fprintf(stderr, CMD ": setenv %s: %s\n", name, strerror(errno));
    return -1;
}

static int set_env_u64(const char *name, unsigned long long v)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%llu", v);
    return set_env(name, buf);
}

/* The program as execvp would find it: a name with a '/' as it is, else
 * the first executable regular file of that name in PATH. */
static int find_program(const char *name, char *out, size_t len)
{
    if (strchr(name, '/'))
        return snprintf(out, len, "%s", name) < (int)len && access(out, F_OK) == 0 ? 0 : -1;
    const char *path = getenv("PATH");
    if (!path || !*path)
        path = "/usr/local/bin:/usr/bin:/bin";
    while (*path) {
        const char *colon = strchr(path, ':');
        size_t n = colon ? (size_t)(colon - path) : strlen(path);
        int w = n ? snprintf(out, len, "%.*s/%s", (int)n, path, name) : snprintf(out, len, "./%s", name);
        struct stat st;
        if (w > 0 && (size_t)w < len && stat(out, &st) == 0 && S_ISREG(st.st_mode) && access(out, X_OK) == 0)
            return 0;
        path += n + (colon != NULL);
    }
    return -1;
}

typedef struct {
    int dynamic; /* has PT_INTERP */
    int mpi;     /* a DT_NEEDED entry names libmpi */
} elf_facts;

static int read_at(int fd, void *buf, size_t n, off_t off)
{
    return pread(fd, buf, n, off) == (ssize_t)n ? 0 : -1;
}

/* The file offset of virtual address v (in a PT_LOAD segment), or -1. */
static off_t vaddr_offset(const Elf64_Phdr *ph, int n, Elf64_Addr v)
{
    for (int i = 0; i < n; i++)
        if (ph[i].p_type == PT_LOAD && v >= ph[i].p_vaddr && v < ph[i].p_vaddr + ph[i].p_filesz)
            return (off_t)(ph[i].p_offset + (v - ph[i].p_vaddr));
    return -1;
}

/* PT_INTERP and the DT_NEEDED list of a 64-bit ELF file; 0, or -1 with
 * the reason in why. */
static int read_elf(int fd, elf_facts *f, char *why, size_t whylen)
{
    Elf64_Ehdr eh;
    if (read_at(fd, &eh, sizeof eh, 0) || eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_phentsize != sizeof(Elf64_Phdr) ||
        eh.e_phnum == 0 || eh.e_phnum > 4096) {
        snprintf(why, whylen, "not a 64-bit ELF program (the preload library is 64-bit)");
        return -1;
    }
    Elf64_Phdr *ph = calloc(eh.e_phnum, sizeof *ph);
    if (!ph || read_at(fd, ph, eh.e_phnum * sizeof *ph, (off_t)eh.e_phoff)) {
        free(ph);
        snprintf(why, whylen, "cannot read its program headers");
        return -1;
    }
    memset(f, 0, sizeof *f);
    const Elf64_Phdr *dyn = NULL;
    for (int i = 0; i < eh.e_phnum; i++) {
        if (ph[i].p_type == PT_INTERP)
            f->dynamic = 1;
        if (ph[i].p_type == PT_DYNAMIC)
            dyn = &ph[i];
    }
    if (dyn && dyn->p_filesz && dyn->p_filesz < (1u << 20)) {
        size_t n = dyn->p_filesz / sizeof(Elf64_Dyn);
        Elf64_Dyn *d = calloc(n ? n : 1, sizeof *d);
        if (d && read_at(fd, d, n * sizeof *d, (off_t)dyn->p_offset) == 0) {
            Elf64_Addr strtab = 0;
            for (size_t i = 0; i < n && d[i].d_tag != DT_NULL; i++)
                if (d[i].d_tag == DT_STRTAB)
                    strtab = d[i].d_un.d_ptr;
            off_t str_off = strtab ? vaddr_offset(ph, eh.e_phnum, strtab) : -1;
            for (size_t i = 0; i < n && d[i].d_tag != DT_NULL && str_off >= 0; i++) {
                if (d[i].d_tag != DT_NEEDED)
                    continue;
                char name[256] = "";
                ssize_t r = pread(fd, name, sizeof name - 1, str_off + (off_t)d[i].d_un.d_val);
                if (r > 0 && strstr(name, "libmpi"))
                    f->mpi = 1;
            }
        }
        free(d);
    }
    free(ph);
    return 0;
}

/* The preload library: beside this binary (build tree), else the install
 * directory. PADDISER_PRELOAD_DIR names another directory. */
static int find_library(const char *lib, char *out, size_t len)
{
    char dirs[2][PATH_MAX];
    int n = 0;
    const char *env = getenv("PADDISER_PRELOAD_DIR");
    if (env && *env) {
        snprintf(dirs[n++], PATH_MAX, "%s", env);
    } else {
        char self[PATH_MAX];
        ssize_t r = readlink("/proc/self/exe", self, sizeof self - 1);
        if (r > 0) {
            self[r] = '\0';
            char *slash = strrchr(self, '/');
            if (slash) {
                *slash = '\0';
                snprintf(dirs[n++], PATH_MAX, "%s", self);
            }
        }
        snprintf(dirs[n++], PATH_MAX, "%s", PD_LIBDIR);
    }
    for (int i = 0; i < n; i++)
        if (pd_path_join(out, len, dirs[i], lib) == 0 && access(out, R_OK) == 0)
            return 0;
    return -1;
}

int cmd_run(int argc, char **argv)
{
    enum {
        OPT_CAP = 1000,
        OPT_BACKEND,
        OPT_PLANNER,
        OPT_MIN,
        OPT_SYNC,
        OPT_HINTS,
        OPT_OUT,
        OPT_SAMPLER,
        OPT_REGIONS,
        OPT_STORE,
        OPT_REGION_COST,
        OPT_KEEP
    };
    static const struct option longopts[] = {
        {"fast-capacity", required_argument, NULL, OPT_CAP},
        {"backend", required_argument, NULL, OPT_BACKEND},
        {"planner", required_argument, NULL, OPT_PLANNER},
        {"min-bytes", required_argument, NULL, OPT_MIN},
        {"keep-freed", required_argument, NULL, OPT_KEEP},
        {"sync-every", required_argument, NULL, OPT_SYNC},
        {"region-cost", required_argument, NULL, OPT_REGION_COST},
        {"hints", required_argument, NULL, OPT_HINTS},
        {"out", required_argument, NULL, OPT_OUT},
        {"sampler", required_argument, NULL, OPT_SAMPLER},
        {"regions", required_argument, NULL, OPT_REGIONS},
        {"profile-store", required_argument, NULL, OPT_STORE},
        {"verbose", no_argument, NULL, 'v'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int verbose = 0;
    optind = 0;
    int c; /* '+': options end at the program */
    while ((c = pd_opt_next(CMD, argc, argv, "+hv", longopts)) != -1) {
        unsigned long long v;
        long n;
        switch (c) {
        case 'h':
            usage(stdout);
            return 0;
        case 'v':
            verbose++;
            break;
        case OPT_CAP:
            if (!parse_size(optarg, &v))
                return pd_opt_error(CMD, "--fast-capacity must be a size (bytes, or with K, M, G), got '%s'", optarg);
            if (set_env_u64("PADDISER_FAST_CAPACITY", v))
                return 2;
            break;
        case OPT_MIN:
            if (!parse_size(optarg, &v) || v == 0 || v > (unsigned long long)LONG_MAX)
                return pd_opt_error(CMD, "--min-bytes must be a positive size (bytes, or with K, M, G), got '%s'",
                                    optarg);
            if (set_env_u64("PADDISER_RUN_MIN_BYTES", v))
                return 2;
            break;
        case OPT_KEEP:
            if (!parse_size(optarg, &v) || v > (unsigned long long)LONG_MAX)
                return pd_opt_error(CMD, "--keep-freed must be a size (bytes, or with K, M, G; 0: none), got '%s'",
                                    optarg);
            if (set_env_u64("PADDISER_RUN_KEEP_FREED", v))
                return 2;
            break;
        case OPT_BACKEND:
            if (strcmp(optarg, "auto") && strcmp(optarg, "none") && strcmp(optarg, "sim") && strcmp(optarg, "numa"))
                return pd_opt_error(CMD, "--backend must be auto, none, sim or numa, got '%s'", optarg);
            if (set_env("PADDISER_BACKEND", optarg))
                return 2;
            break;
        case OPT_REGIONS:
            if (!*optarg)
                return pd_opt_error(CMD, "--regions needs at least one glob");
            if (set_env("PADDISER_RUN_REGIONS", optarg))
                return 2;
            break;
        case OPT_SAMPLER:
            if (strcmp(optarg, "pmu") && strcmp(optarg, "mprotect") && strcmp(optarg, "auto"))
                return pd_opt_error(CMD, "--sampler must be pmu, mprotect or auto, got '%s'", optarg);
            if (set_env("PADDISER_SAMPLER", optarg))
                return 2;
            break;
        case OPT_PLANNER:
            if (strcmp(optarg, "exact") && strcmp(optarg, "greedy"))
                return pd_opt_error(CMD, "--planner must be exact or greedy, got '%s'", optarg);
            if (set_env("PADDISER_PLANNER", optarg))
                return 2;
            break;
        case OPT_SYNC:
            if (!pd_opt_long(CMD, "--sync-every", optarg, 1, 1000000, &n))
                return 2;
            if (set_env_u64("PADDISER_RUN_SYNC_EVERY", (unsigned long long)n))
                return 2;
            break;
        case OPT_REGION_COST:
            if (!pd_opt_long(CMD, "--region-cost", optarg, 0, 1000000, &n))
                return 2;
            if (set_env_u64("PADDISER_RUN_REGION_COST_PCT", (unsigned long long)n))
                return 2;
            break;
        case OPT_HINTS: {
            /* Absolute: the program may change directory. */
            char real[PATH_MAX];
            if (!realpath(optarg, real) || access(real, R_OK) != 0) {
                fprintf(stderr, CMD ": hints file %s: %s\n", optarg, strerror(errno));
                return 2;
            }
            if (set_env("PADDISER_RUN_HINTS", real))
                return 2;
            break;
        }
        case OPT_STORE: {
            /* Absolute: the program may change directory. Its folder must
             * exist; the file is written at the program's exit. */
            char dir[PATH_MAX], real[PATH_MAX], abs[PATH_MAX];
            const char *slash = strrchr(optarg, '/');
            const char *base = slash ? slash + 1 : optarg;
            if (!*base || !strcmp(base, ".") || !strcmp(base, ".."))
                return pd_opt_error(CMD, "--profile-store needs a file name, got '%s'", optarg);
            snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - optarg) + (slash == optarg) : 1,
                     slash ? optarg : ".");
            if (!realpath(dir, real) || pd_path_join(abs, sizeof abs, real, base) != 0) {
                fprintf(stderr, CMD ": profile store %s: folder %s: %s\n", optarg, dir, strerror(errno));
                return 2;
            }
            if (set_env("PADDISER_PROFILE_STORE", abs))
                return 2;
            break;
        }
        case OPT_OUT: {
            char real[PATH_MAX];
            if (pd_mkdir_p(optarg, 0755) != 0 || !realpath(optarg, real)) {
                fprintf(stderr, CMD ": output directory %s: %s\n", optarg, strerror(errno));
                return 2;
            }
            char csv[PATH_MAX];
            if (pd_path_join(csv, sizeof csv, real, "tasks.csv") != 0) {
                fprintf(stderr, CMD ": output directory %s: path too long\n", optarg);
                return 2;
            }
            if (set_env("PADDISER_RUN_OUT", real) || set_env("PADDISER_TASKS_CSV", csv))
                return 2;
            break;
        }
        default:
            return 2;
        }
    }
    if (optind >= argc) {
        usage(stderr);
        return 2;
    }
    /* The program was not written for page protection: a read(2) into a
     * protected page fails with EFAULT instead of faulting, so by default
     * only the PMU samples (docs/runtime.md, "paddiser run: allocations and
     * options"). */
    if (!getenv("PADDISER_SAMPLER") && set_env("PADDISER_SAMPLER", "pmu"))
        return 2;
    char **prog_argv = argv + optind;
    const char *prog = prog_argv[0];

    char path[PATH_MAX];
    if (find_program(prog, path, sizeof path) != 0) {
        fprintf(stderr, CMD ": %s: program not found%s\n", prog, strchr(prog, '/') ? "" : " in PATH");
        return 2;
    }
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode) || access(path, X_OK) != 0) {
        fprintf(stderr, CMD ": %s: not an executable file\n", path);
        return 2;
    }
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        fprintf(stderr, CMD ": %s: %s\n", path, strerror(errno));
        return 2;
    }
    unsigned char magic[4] = {0};
    ssize_t got = pread(fd, magic, sizeof magic, 0);
    elf_facts facts = {0, 0};
    if (got >= 2 && magic[0] == '#' && magic[1] == '!') {
        /* A script: its interpreter (and every program it starts) gets the
         * library through the inherited LD_PRELOAD. */
        fprintf(stderr,
                CMD ": %s is a script: the preload library applies to its interpreter and to every "
                    "dynamically linked program it starts\n",
                path);
        facts.dynamic = 1;
    } else if (got != 4 || memcmp(magic, ELFMAG, SELFMAG) != 0) {
        close(fd);
        fprintf(stderr, CMD ": %s is neither an ELF program nor a '#!' script\n", path);
        return 2;
    } else {
        char why[160];
        if (read_elf(fd, &facts, why, sizeof why) != 0) {
            close(fd);
            fprintf(stderr, CMD ": %s: %s\n", path, why);
            return 2;
        }
        if (!facts.dynamic) {
            close(fd);
            fprintf(stderr,
                    CMD ": preloading needs a dynamically linked program: %s has no program "
                        "interpreter (statically linked, or a library); rebuild it without -static, "
                        "or use the API (docs/runtime.md)\n",
                    path);
            return 2;
        }
    }
    close(fd);
    const char *base = strrchr(prog, '/') ? strrchr(prog, '/') + 1 : prog;
    if (!strcmp(base, "mpirun") || !strcmp(base, "mpiexec") || !strcmp(base, "srun") || !strcmp(base, "orterun"))
        fprintf(stderr, CMD ": warning: %s starts the ranks; put paddiser run after it: %s ... paddiser run -- "
                        "./app\n", base, base);

    char lib[PATH_MAX];
    if (facts.mpi) {
        if (find_library(PRELOAD_MPI_LIB, lib, sizeof lib) != 0) {
            fprintf(stderr, CMD ": warning: %s is linked with libmpi but %s was not built: ranks are not "
                            "tasks, only allocations are tracked\n", path, PRELOAD_MPI_LIB);
            facts.mpi = 0;
        }
    }
    if (!facts.mpi && find_library(PRELOAD_LIB, lib, sizeof lib) != 0) {
        fprintf(stderr, CMD ": %s not found beside the paddiser binary nor in %s (build it with make, or "
                        "install with make install)\n", PRELOAD_LIB, PD_LIBDIR);
        return 2;
    }
    if (strpbrk(lib, " :")) {
        fprintf(stderr, CMD ": the preload library's path %s has a space or ':', which LD_PRELOAD cannot hold\n",
                lib);
        return 2;
    }
    const char *old = getenv("LD_PRELOAD");
    size_t need = strlen(lib) + (old ? strlen(old) + 1 : 0) + 1;
    char *preload = malloc(need);
    if (!preload) {
        fprintf(stderr, CMD ": out of memory\n");
        return 2;
    }
    snprintf(preload, need, "%s%s%s", lib, old && *old ? ":" : "", old && *old ? old : "");
    if (set_env("LD_PRELOAD", preload))
        return 2;
    if (verbose) {
        if (set_env_u64("PADDISER_RUN_VERBOSE", (unsigned long long)verbose))
            return 2;
        fprintf(stderr, CMD ": LD_PRELOAD=%s %s\n", preload, path);
    } else if (!getenv("PADDISER_QUIET") && set_env("PADDISER_QUIET", "1")) {
        return 2;
    }
    free(preload);
    execv(path, prog_argv);
    fprintf(stderr, CMD ": cannot execute %s: %s\n", path, strerror(errno));
    return 2;
}
