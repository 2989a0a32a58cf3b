"""Randomised cross-check of the run summary (src/bench/summary.c) against an
independent reading of shared/spec/summary-metrics.md written here in Python.
Generates run directories with several hosts, cores, GPUs and I/O devices,
malformed rows ([N/A], blanks, short rows), shuffled header orders, CRLF and
samplers that left no trace, runs `paddiser bench --summarize`, and compares
every cell. usage: summary_reference.py PADDISER WORKDIR SEED ITERATIONS"""
# --- reference metrics, one repetition ---
import csv, glob, math, os, random, re, sys, collections

NUM = re.compile(r'^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$')
def num(s):
    s = s.strip()
    if not NUM.match(s): return None
    v = float(s)
    return v if math.isfinite(v) else None

def trace_rows(pattern):
    for f in sorted(glob.glob(pattern)):
        with open(f, newline='') as fh:
            r = list(csv.reader(fh))
        if not r: continue
        hdr = [h.strip() for h in r[0]]
        for row in r[1:]:
            if not row or len(row) != len(hdr): continue
            yield dict(zip(hdr, row))

def f2(x): return '%.2f' % x
def f3(x): return '%.3f' % x

def cpu(rep):
    out = {}
    R = []
    for r in trace_rows(rep + '/__iops_trace_*.csv'):
        v = [num(r[k]) for k in ('timestamp', 'cpu_user_pct', 'cpu_system_pct', 'mem_total_kb', 'mem_available_kb')]
        if None in v: continue
        R.append((v[0], r['hostname'], r['core'], v[3] - v[4], v[1] + v[2]))
    if not R:
        return {'nodes_traced': '0', 'samples_collected': '0'}
    hostmax = collections.defaultdict(lambda: -1e300); coremax = collections.defaultdict(lambda: -1e300)
    for ts, h, c, m, u in R:
        hostmax[h] = max(hostmax[h], m); coremax[(h, c)] = max(coremax[(h, c)], u)
    G = 1024.0 ** 2
    out['mem_peak_gb'] = f3(max(x[3] for x in R) / G)
    out['mem_avg_gb'] = f3(sum(x[3] for x in R) / len(R) / G)
    out['mem_peak_per_node_gb'] = f3(max(hostmax.values()) / G)
    out['cpu_avg_pct'] = f2(sum(x[4] for x in R) / len(R))
    out['cpu_max_pct'] = f2(max(x[4] for x in R))
    out['cpu_imbalance_pct'] = f2(max(coremax.values()) - min(coremax.values()))
    out['nodes_traced'] = str(len(hostmax))
    out['samples_collected'] = str(len(R))
    ts = [x[0] for x in R]
    out['trace_duration_s'] = f2(max(ts) - min(ts) if len(R) >= 2 else 0)
    return out

def gpu(rep):
    R = []
    for r in trace_rows(rep + '/__iops_gpu_trace_*.csv'):
        v = [num(r[k]) for k in ('timestamp', 'utilization_gpu_pct', 'utilization_mem_pct', 'memory_used_mib', 'temperature_c', 'power_draw_w')]
        if None in v or not re.match(r'^\s*[+-]?\d+\s*$', r['gpu_index']): continue
        R.append((r['hostname'], int(r['gpu_index']), v))
    out = {}
    if not R:
        return {'gpu_count': '0', 'gpu_samples_collected': '0'}
    by = collections.OrderedDict()
    for h, i, v in R: by.setdefault((h, i), []).append(v)
    hosts = {h for h, _, _ in R}
    multi = len(hosts) > 1
    out['gpu_count'] = str(len(by)); out['gpu_samples_collected'] = str(len(R))
    agg = collections.defaultdict(list); E = 0
    for (h, i), vs in sorted(by.items()):
        lab = ('%s_gpu%d' % (h.split('.')[0].replace('-', '_'), i)) if multi else 'gpu%d' % i
        n = len(vs)
        mean = lambda k: sum(v[k] for v in vs) / n
        ps = sorted(((v[0], v[5]) for v in vs), key=lambda x: x[0])
        e = sum((ps[j - 1][1] + ps[j][1]) / 2 * (ps[j][0] - ps[j - 1][0]) for j in range(1, n))
        out[lab + '_avg_utilization_pct'] = f2(mean(1)); out[lab + '_avg_power_w'] = f2(mean(5))
        out[lab + '_avg_temperature_c'] = f2(mean(4)); out[lab + '_mem_peak_mib'] = f2(max(v[3] for v in vs))
        out[lab + '_energy_j'] = f2(e)
        for k in (1, 2, 4, 5): agg[k].append(mean(k))
        E += e
    allv = [v for _, _, v in R]
    out['gpu_avg_utilization_pct'] = f2(max(agg[1])); out['gpu_max_utilization_pct'] = f2(max(v[1] for v in allv))
    out['gpu_avg_mem_utilization_pct'] = f2(max(agg[2])); out['gpu_mem_peak_mib'] = f2(max(v[3] for v in allv))
    out['gpu_avg_temperature_c'] = f2(max(agg[4])); out['gpu_max_temperature_c'] = f2(max(v[4] for v in allv))
    out['gpu_avg_power_w'] = f2(max(agg[5])); out['gpu_max_power_w'] = f2(max(v[5] for v in allv))
    out['gpu_energy_j'] = f2(E)
    ts = [v[0] for v in allv]
    out['gpu_trace_duration_s'] = f2(max(ts) - min(ts) if len(R) >= 2 else 0)
    return out

def io(rep):
    inst = collections.OrderedDict(); tot = collections.Counter()
    for r in trace_rows(rep + '/__iops_io_trace_*.csv'):
        v = [num(r[k]) for k in ('timestamp', 'interval_s', 'read_bytes', 'write_bytes', 'read_ops', 'write_ops')]
        if None in v or v[1] <= 0 or min(v[2:]) < 0: continue
        k = (r['hostname'], v[0])
        i = inst.setdefault(k, {'iv': v[1], 'r': 0, 'w': 0})
        i['iv'] = max(i['iv'], v[1]); i['r'] += v[2]; i['w'] += v[3]
        tot['r'] += v[2]; tot['w'] += v[3]; tot['ro'] += v[4]; tot['wo'] += v[5]
        src = r['source']
        if src in ('block', 'nfs'):
            tot[src + 'r'] += v[2]; tot[src + 'w'] += v[3]
    if not inst:
        return {'io_nodes_traced': '0', 'io_samples_collected': '0'}
    dur = collections.defaultdict(float)
    for (h, _), i in inst.items(): dur[h] += i['iv']
    D = max(dur.values()); M = 1024.0 ** 2; G = 1024.0 ** 3
    ar = sum(i['iv'] for i in inst.values() if i['r'] > 0); aw = sum(i['iv'] for i in inst.values() if i['w'] > 0)
    return {
        'io_read_gb': f3(tot['r'] / G), 'io_write_gb': f3(tot['w'] / G),
        'io_disk_read_gb': f3(tot['blockr'] / G), 'io_disk_write_gb': f3(tot['blockw'] / G),
        'io_nfs_read_gb': f3(tot['nfsr'] / G), 'io_nfs_write_gb': f3(tot['nfsw'] / G),
        'io_read_mbs_avg': f2(tot['r'] / M / D), 'io_write_mbs_avg': f2(tot['w'] / M / D),
        'io_read_mbs_peak_per_node': f2(max(i['r'] / i['iv'] / M for i in inst.values())),
        'io_write_mbs_peak_per_node': f2(max(i['w'] / i['iv'] / M for i in inst.values())),
        'io_read_iops_avg': f2(tot['ro'] / D), 'io_write_iops_avg': f2(tot['wo'] / D),
        'io_nodes_traced': str(len(dur)), 'io_samples_collected': str(len(inst)),
        'io_trace_duration_s': f2(D), 'io_read_active_s': f2(ar), 'io_write_active_s': f2(aw),
        'io_read_mbs_active': f2(tot['r'] / M / ar if ar > 0 else 0),
        'io_write_mbs_active': f2(tot['w'] / M / aw if aw > 0 else 0),
    }

def rep_metrics(rep):
    out = {}
    kinds = [('__iops_trace_*.csv', '__iops_runtime_sampler.sh', cpu), ('__iops_gpu_trace_*.csv', '__iops_runtime_gpu_sampler.sh', gpu),
             ('__iops_io_trace_*.csv', '__iops_runtime_io_sampler.sh', io)]
    for pat, wrap, fn in kinds:
        if glob.glob(rep + '/' + pat) or os.path.exists(rep + '/' + wrap):
            out.update(fn(rep))
    return out

# --- random runs ---
import json, shutil, subprocess
PD = sys.argv[1]; WORK = sys.argv[2]; seed0 = int(sys.argv[3]); N = int(sys.argv[4])
CPU = ['timestamp','hostname','core','cpu_user_pct','cpu_system_pct','cpu_idle_pct','mem_total_kb','mem_available_kb']
GPU = ['timestamp','hostname','gpu_index','gpu_name','utilization_gpu_pct','utilization_mem_pct','memory_used_mib','memory_total_mib','temperature_c','power_draw_w','clock_sm_mhz','clock_mem_mhz']
IO = ['timestamp','hostname','source','device','path','interval_s','read_bytes','write_bytes','read_ops','write_ops']
BAD = ['[N/A]', '', 'abc', 'nan', '-']
def maybe_bad(rng, s, p=0.03): return rng.choice(BAD) if rng.random() < p else s
def write(path, hdr, rows, rng):
    order = list(range(len(hdr)))
    if rng.random() < 0.3: rng.shuffle(order)
    with open(path, 'w', newline='') as f:
        w = csv.writer(f, lineterminator=rng.choice(['\n', '\r\n']))
        w.writerow([hdr[i] for i in order])
        for r in rows:
            if rng.random() < 0.02: w.writerow([r[i] for i in order][:-1]); continue
            w.writerow([r[i] for i in order])
bad = 0
for it in range(N):
    rng = random.Random(seed0 + it)
    run = WORK + '/run'; shutil.rmtree(run, ignore_errors=True)
    for e in range(1, rng.randint(1, 3) + 1):
        ed = f'{run}/exec_{e:04d}'; os.makedirs(ed)
        json.dump({'x': e, 'y': 'v%d' % e}, open(ed + '/__iops_params.json', 'w'))
        for r in range(1, rng.randint(1, 3) + 1):
            rd = f'{ed}/repetition_{r:03d}'; os.makedirs(rd)
            hosts = rng.sample(['node-01.c.x', 'node02', 'n3.a', 'n3.b', 'gpu-host'], rng.randint(1, 3))
            t0 = 1.7e9 + rng.random() * 1000
            for kind in ('cpu', 'gpu', 'io'):
                if rng.random() < 0.2: continue
                if rng.random() < 0.8: open(rd + {'cpu': '/__iops_runtime_sampler.sh', 'gpu': '/__iops_runtime_gpu_sampler.sh', 'io': '/__iops_runtime_io_sampler.sh'}[kind], 'w').close()
                if rng.random() < 0.15: continue  # sampler left no trace
                for h in hosts:
                    att = rng.randint(1, 2)
                    rows = []
                    nsamp = rng.randint(0, 6)
                    for s in range(nsamp):
                        ts = '%.3f' % (t0 + s * rng.uniform(0.15, 0.25) + rng.random() * 0.01)
                        if kind == 'cpu':
                            tot = rng.randint(10**6, 3 * 10**7)
                            for c in range(rng.randint(1, 4)):
                                u = rng.uniform(0, 100); sy = rng.uniform(0, 100 - u)
                                rows.append([maybe_bad(rng, ts), h, str(c), maybe_bad(rng, '%.2f' % u), '%.2f' % sy, '%.2f' % (100 - u - sy), str(tot), maybe_bad(rng, str(rng.randint(0, tot)))])
                        elif kind == 'gpu':
                            for g in range(rng.randint(1, 3)):
                                rows.append([ts, h, maybe_bad(rng, str(g)), 'NVIDIA X', str(rng.randint(0, 100)), str(rng.randint(0, 100)), maybe_bad(rng, str(rng.randint(0, 80000))), '81920', str(rng.randint(30, 90)), maybe_bad(rng, '%.2f' % rng.uniform(20, 400)), maybe_bad(rng, '1410', 0.2), '1215'])
                        else:
                            iv = maybe_bad(rng, rng.choice(['%.3f' % rng.uniform(0.1, 0.3), '0', '-0.1']) if rng.random() < 0.05 else '%.3f' % rng.uniform(0.1, 0.3))
                            for d in range(rng.randint(1, 3)):
                                src = rng.choice(['block', 'block', 'nfs', 'other'])
                                rows.append([ts, h, src, 'dev%d' % d, '/p', iv, maybe_bad(rng, str(rng.choice([0, 0, rng.randint(0, 10**9)]))), str(rng.choice([0, rng.randint(0, 10**9)])), str(rng.randint(0, 100)), str(rng.randint(0, 100))])
                    pre = {'cpu': '__iops_trace_', 'gpu': '__iops_gpu_trace_', 'io': '__iops_io_trace_'}[kind]
                    write(f'{rd}/{pre}{h}_{att}{rng.randint(0,9)}.csv', {'cpu': CPU, 'gpu': GPU, 'io': IO}[kind], rows, rng)
    p = subprocess.run([PD, 'bench', '--summarize', run], capture_output=True, text=True)
    summ = run + '/__iops_resource_summary.csv'
    # expected rows
    exp = {}
    nfiles = 0
    for e in sorted(os.listdir(run)):
        if not e.startswith('exec_'): continue
        for r in sorted(os.listdir(run + '/' + e)):
            if not r.startswith('repetition_'): continue
            rd = f'{run}/{e}/{r}'
            nfiles += len([f for f in os.listdir(rd) if f.endswith('.csv')])
            m = rep_metrics(rd)
            if m: exp[(e, str(int(r.split('_')[1])))] = m
    if nfiles == 0:
        if os.path.exists(summ): print(it, 'summary without sample files'); bad += 1
        continue
    got = {}
    for row in csv.DictReader(open(summ)):
        got[(row['execution_id'], row['repetition'])] = {k: v for k, v in row.items() if v != '' and k not in ('execution_id', 'repetition', 'x', 'y')}
    if got != exp:
        bad += 1
        for k in sorted(set(got) | set(exp)):
            g, x = got.get(k), exp.get(k)
            if g != x:
                diff = {c: (g.get(c) if g else None, x.get(c) if x else None) for c in set(g or {}) | set(x or {}) if (g or {}).get(c) != (x or {}).get(c)}
                print('seed', seed0 + it, k, diff)
        if bad > 5: break
print('iterations', N, 'mismatching', bad)
sys.exit(1 if bad else 0)
