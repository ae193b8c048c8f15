/** Part 4 of bench/CROSS_WORKER.md: CPU per request, where the limit is and what more cores would give. */

import { fmt, ratio } from '../lib/env.js';
import { type PerRequest, perRequest, pooled, predictSeparate, predictShared } from './model.js';
import type { CrossWorkerResult } from './report.js';
import { cappedRuns, cores, ms, pct, scaling, TARGET_RATIO } from './report-format.js';
import type { ThroughputRun } from './throughput.js';

function perRequestRow(run: ThroughputRun): string {
  const per = perRequest(run);
  const c = run.postgresCounters;
  const n = run.combined.total;
  const walBusy = run.postgresWaits['IO/WALSync'] ?? 0;
  return `| ${run.label} | ${fmt(per.reqPerSec)} | ${ms(run.combined.merged.p50)} | ${fmt(per.worker, 3)} | ${fmt(
    per.workerMain,
    3,
  )} | ${fmt(per.postgres, 3)} | ${fmt(per.loadGenerator, 3)} | ${fmt(per.kernel, 3)} | ${fmt(per.machine, 3)} | ${
    c ? fmt(c.commits / n, 2) : '–'
  } | ${c ? fmt(c.walSyncs / n, 2) : '–'} | ${c && c.walSyncs > 0 ? fmt(c.commits / c.walSyncs, 1) : '–'} | ${fmt(
    walBusy,
    2,
  )} |`;
}

/** Cores of the shared machine that went to work other than this run's requests. */
function otherCores(run: ThroughputRun): number {
  const pg = run.cpu.postgresBreakdown;
  return run.cpu.otherProcessCores + (pg ? pg.others + pg.sampler : 0);
}

const mean = (xs: number[]): number => xs.reduce((sum, x) => sum + x, 0) / xs.length;

export function renderModel(r: CrossWorkerResult): string[] {
  const capped = cappedRuns(r);
  const fullSpeed = r.throughput.filter((t) => t.workers === 1);
  const params: PerRequest = pooled(fullSpeed.length > 0 ? fullSpeed : r.throughput);
  const twoRun = r.throughput.find((t) => t.workers === 2);
  const multi = twoRun ? perRequest(twoRun) : undefined;
  const cappedParams = capped.length > 0 ? pooled(capped) : undefined;
  const cap = r.capped?.available ? r.capped.cores : undefined;
  const machineCores = r.machine.cores;
  const total = params.worker + params.postgres + params.loadGenerator + params.kernel;
  const lines: string[] = [
    '## 4. Where the limit is, and what more cores would give',
    '',
    `CPU per request in every message/send run (CPU ms of the window / requests). "Postgres" here is the backends of the workers' connections and the server's own processes (walwriter, checkpointer, …), not the sampler or other sessions; "kernel" = busy time no process accounts for, as in the CPU tables; "machine" is all busy time, other processes included. Commits, WAL flushes: deltas of pg_stat_database.xact_commit (of the bench database) and pg_stat_wal.wal_sync over the window, whole server, approximate (backends report them at most once a second); fewer commits than requests means the store's group commit put several requests' events in one transaction. "WAL flush busy": the average number of the store's backends in \`IO/WALSync\`, i.e. about the share of the time a WAL flush was under way (flushes go one at a time).`,
    '',
    '| run | req/s | p50 ms | workers ms | of it main threads ms | Postgres ms | load generator ms | kernel ms | machine ms | commits / request | WAL flushes / request | commits per WAL flush | WAL flush busy |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...[...r.throughput, ...capped].map(perRequestRow),
    '',
  ];
  if (cappedParams) {
    lines.push(
      `**The cost per request is not a constant.** A capped worker spent ${fmt(cappedParams.worker, 3)} ms of CPU per request (its main thread ${fmt(
        cappedParams.workerMain,
        3,
      )}), against ${fmt(params.worker, 3)} ms (main thread ${fmt(
        params.workerMain,
        3,
      )}) for an uncapped one; Postgres ${fmt(cappedParams.postgres, 3)} against ${fmt(
        params.postgres,
        3,
      )} ms. A capped worker holds each of its ${r.config.throughput.connections} requests several times longer (p50 above), so more of their objects survive the young-generation collections and have to be marked and swept by the major GC, which runs on V8's helper threads (the difference between "workers" and "of it main threads"); and fewer requests share each of the store's batched commits and each WAL flush. So the capped runs measure scaling, but their per-request cost is not that of a worker on a full core.`,
      '',
    );
  }
  lines.push(
    `The model is a CPU budget. Per request, the workers spend w, Postgres p, the load generator g and the kernel k ms of CPU; a worker can use at most c cores (its cgroup quota, or 1: one core per worker, its JavaScript thread and GC helpers together), Postgres P cores; on the shared machine other work (other processes, other Postgres sessions, the bench's wait sampler) took o cores during the window:`,
    '',
    '- everything on C shared cores (the runs here): **X ≈ min(W × c / w, (C − o) / (w + p + g + k))**;',
    '- workers and Postgres on separate cores, the load generator elsewhere: **X ≈ min(W / w, P / p)**.',
    '',
    `Parameters at full speed, from part 2's 1-worker runs together (their CPU seconds over their requests): **w = ${fmt(
      params.worker,
      3,
    )} ms, p = ${fmt(params.postgres, 3)} ms, g = ${fmt(params.loadGenerator, 3)} ms, k = ${fmt(
      params.kernel,
      3,
    )} ms** (${fmt(total, 3)} ms in all). One worker on a full core of its own could serve 1000 / w = ${fmt(
      1000 / params.worker,
    )} req/s; one core of Postgres 1000 / p = ${fmt(1000 / params.postgres)} req/s.`,
    '',
    `Predicted against measured on this ${machineCores}-core machine (C = ${machineCores}; c = 1 for the uncapped workers${
      cap !== undefined ? `, ${fmt(cap, 2)} for the capped ones` : ''
    }). "Full-speed costs" uses the parameters above for every run; "the run's own costs" uses each run's own w, p, g, k (the table above), which says which resource bound given what a request cost in that run:`,
    '',
    "| run | W | c | o | workers limit W × c / w | machine limit (C − o) / (w + p + g + k) | predicted, full-speed costs | binds | predicted, the run's own costs | binds | measured req/s | measured / full-speed | measured / own |",
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: | --- | ---: | ---: | ---: |',
  );
  const checks = [...r.throughput, ...capped].map((run) => {
    const c = run.cap ? run.cap.cores : 1;
    const o = otherCores(run);
    const prediction = predictShared(params, run.workers, c, run.cpu.cores, o);
    const own = predictShared(perRequest(run), run.workers, c, run.cpu.cores, o);
    lines.push(
      `| ${run.label} | ${run.workers} | ${fmt(c, 2)} | ${cores(o)} | ${fmt(prediction.workerLimit)} | ${fmt(
        prediction.machineLimit,
      )} | ${fmt(prediction.predicted)} | ${prediction.binds} | ${fmt(own.predicted)} | ${own.binds} | ${fmt(
        run.combined.reqPerSec,
      )} | ${ratio(run.combined.reqPerSec, prediction.predicted)} | ${ratio(run.combined.reqPerSec, own.predicted)} |`,
    );
    return { run, prediction, own, share: run.combined.reqPerSec / prediction.predicted };
  });
  const uncapped1 = checks.filter((k) => !k.run.cap && k.run.workers === 1);
  const uncapped2 = checks.find((k) => !k.run.cap && k.run.workers === 2);
  const capped1 = checks.filter((k) => k.run.cap && k.run.workers === 1);
  const capped2 = checks.find((k) => k.run.cap && k.run.workers === 2);
  lines.push('', '### The limit on this machine', '');
  if (uncapped1.length > 0 && uncapped2) {
    const p1 = uncapped1[0]?.prediction;
    const p2 = uncapped2.prediction;
    const measuredRatio = uncapped2.run.combined.reqPerSec / mean(uncapped1.map((k) => k.run.combined.reqPerSec));
    lines.push(
      `- **1 uncapped worker: ${p1?.binds ?? '–'} binds** (${fmt(p1?.predicted)} req/s predicted: the machine's ${machineCores} cores${
        p1 && p1.machineLimit < p1.workerLimit ? ` over ${fmt(total, 3)} ms of CPU per request` : ''
      }, against ${fmt(p1?.workerLimit)} req/s the worker could do on a full core); measured ${uncapped1.map((k) => fmt(k.run.combined.reqPerSec)).join(' and ')} req/s, ${uncapped1
        .map((k) => ratio(k.share, 1))
        .join(' and ')} of the prediction. The worker used ${uncapped1
        .map((k) => cores(k.run.cpu.groups['worker A']))
        .join(' and ')} cores: it was not its own limit; the machine was ${uncapped1
        .map((k) => cores(k.run.cpu.machineBusyCores))
        .join(' and ')} of ${machineCores} cores busy.`,
      `- **2 uncapped workers: ${p2.binds} binds** (${fmt(p2.predicted)} req/s predicted${
        p1 ? `, ${ratio(p2.predicted, p1.predicted)} of one worker` : ''
      }): ${
        p2.binds === 'machine CPU'
          ? "a second worker adds worker capacity, but the machine's cores were already the limit with one, and every request still needs its Postgres, load-generator and kernel CPU on the same cores;"
          : 'the workers could still use more;'
      } measured ${fmt(uncapped2.run.combined.reqPerSec)} req/s, ${ratio(uncapped2.share, 1)} of the prediction, ${ratio(
        measuredRatio,
        1,
      )} of one worker.`,
    );
    const below = [...uncapped1, uncapped2].filter((k) => k.share < 0.85);
    if (below.length > 0) {
      lines.push(
        `- Below the CPU budget by more than 15% (${below.map((k) => `${k.run.label} ${ratio(k.share, 1)}`).join(', ')}): near saturation not every idle moment of a core can be used (a process that wakes up waits in the run queue while the other core is busy; the machine was ${below
          .map((k) => cores(k.run.cpu.machineBusyCores))
          .join(
            ', ',
          )} busy), and requests also wait for things that take no CPU: mostly WAL flushes (the backends' main waits in part 2 are \`LWLock/WALWrite\`, queueing for the one flush under way, and \`IO/WALSync\`, the flush itself). There the model is an upper bound, not a fit.`,
      );
    }
  }
  if (capped1.length > 0 && capped2) {
    const ownRatio = capped2.own.predicted / mean(capped1.map((k) => k.own.predicted));
    const measuredRatio = capped2.run.combined.reqPerSec / mean(capped1.map((k) => k.run.combined.reqPerSec));
    lines.push(
      `- **Capped workers: ${capped2.own.binds === 'workers' ? 'the workers bind' : 'machine CPU binds'}**, with 1 worker and with 2. The model's ratio is ${ratio(
        capped2.prediction.predicted,
        mean(capped1.map((k) => k.prediction.predicted)),
      )} with full-speed costs and ${fmt(ownRatio, 2)}× with the runs' own; measured ${fmt(
        measuredRatio,
        2,
      )}×. In absolute terms full-speed costs over-predict the capped runs (measured ${[...capped1, capped2]
        .map((k) => ratio(k.share, 1))
        .join(
          ', ',
        )} of the prediction), by the rise in CPU per request described above; with the runs' own costs the prediction is the measurement (${[
        ...capped1,
        capped2,
      ]
        .map((k) => ratio(k.run.combined.reqPerSec, k.own.predicted))
        .join(', ')}), i.e. the workers spent their whole budget and nothing else bound.`,
    );
  }
  if (multi) {
    const cappedOne = capped.filter((t) => t.workers === 1);
    const cappedTwo = capped.find((t) => t.workers === 2);
    const c1 = cappedOne.length > 0 ? pooled(cappedOne) : undefined;
    const c2 = cappedTwo ? perRequest(cappedTwo) : undefined;
    const commits = (t: ThroughputRun | undefined): number =>
      t?.postgresCounters ? t.postgresCounters.commits / t.combined.total : Number.NaN;
    const commits1 = mean(fullSpeed.map(commits));
    lines.push(
      `- **A second worker costs CPU per request: the cross-worker tax.** With 2 workers a request cost the workers ${fmt(
        multi.worker,
        3,
      )} ms of CPU against ${fmt(params.worker, 3)} ms with 1 (${ratio(multi.worker, params.worker)}; main threads ${fmt(
        multi.workerMain,
        3,
      )} against ${fmt(params.workerMain, 3)} ms)${
        c1 && c2
          ? `, and the capped workers ${fmt(c2.worker, 3)} against ${fmt(c1.worker, 3)} ms (${ratio(c2.worker, c1.worker)})`
          : ''
      }; Postgres ${fmt(multi.postgres, 3)} against ${fmt(params.postgres, 3)} ms. Commits per request went from ${fmt(
        commits1,
        2,
      )} to ${fmt(
        commits(twoRun),
        2,
      )}: each worker's group commit batches only its own requests, so with the connections split over two workers each batch holds about half as many, and every request carries more of a commit's fixed cost (statement, round trip, WAL flush wait); each worker also receives every other worker's NOTIFYs. ${
        c1 && c2
          ? `With the workers binding, 2 workers serve 2 × w₁ / w₂ = ${fmt((2 * c1.worker) / c2.worker, 2)}× of one: that, not Postgres, is why part 3 ${
              scaling(capped).ratio >= TARGET_RATIO ? 'stayed below 2×' : `stayed below ${TARGET_RATIO}×`
            }.`
          : ''
      } The model below therefore uses the 2-worker costs for 2 or more workers.`,
    );
  }
  const waits = r.throughput.find((t) => t.workers === 2);
  if (waits) {
    const walBusy = waits.postgresWaits['IO/WALSync'] ?? 0;
    if (walBusy > 0.05) {
      lines.push(
        `- The WAL: in the 2-worker run of part 2 a flush was under way ${pct(walBusy)} of the time${
          waits.postgresCounters && waits.postgresCounters.walSyncs > 0
            ? `, ${fmt(waits.postgresCounters.commits / waits.postgresCounters.walSyncs, 1)} commits per flush`
            : ''
        }. Flushes go one at a time, so at that many commits per flush the flush device would be busy all the time at about ${fmt(
          waits.combined.reqPerSec / walBusy,
        )} req/s (${fmt(waits.combined.reqPerSec)} / ${fmt(walBusy, 2)}). That is not a hard ceiling: with more requests waiting, each flush carries more commits (Postgres' group commit, and the store's own batching of commits that wait at the same moment), so the flush rate grows slower than the request rate.`,
      );
    }
  }

  lines.push(
    '',
    '### More cores',
    '',
    `Predicted req/s with the workers and Postgres on separate cores (one core per worker, the rest for Postgres, the split with the most throughput), the load generator on other cores; with 1 worker from the full-speed w and p above, with more from ${
      multi
        ? `part 2's 2-worker run (w = ${fmt(multi.worker, 3)} ms, p = ${fmt(multi.postgres, 3)} ms: the cross-worker tax, assumed not to grow further with more workers)`
        : 'the same (no 2-worker run)'
    }:`,
    '',
    '| cores | workers | Postgres cores | workers limit W / w | Postgres limit P / p | predicted req/s | binds | 1 worker, the rest Postgres | best / 1 worker |',
    '| ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: | ---: |',
  );
  const separate = [2, 4, 8, 16].map((c) => predictSeparate(params, c, multi));
  for (const s of separate) {
    lines.push(
      `| ${s.cores} | ${s.workers} | ${s.postgresCores} | ${fmt(s.workerLimit)} | ${fmt(s.postgresLimit)} | **${fmt(
        s.predicted,
      )}** | ${s.binds} | ${fmt(s.oneWorker)} | ${ratio(s.predicted, s.oneWorker)} |`,
    );
  }
  const m = multi ?? params;
  const share = m.worker / (m.worker + m.postgres);
  const responseMs = mean(fullSpeed.map((t) => t.combined.merged.mean));
  const two = Math.min(2000 / m.worker, 2000 / m.postgres);
  const one = Math.min(1000 / params.worker, 2000 / params.postgres);
  lines.push(
    '',
    `- Balance: with several workers a worker costs ${fmt(m.worker, 3)} ms and Postgres ${fmt(m.postgres, 3)} ms per request, so the best split gives about ${pct(
      share,
    )} of the cores to workers and ${pct(1 - share)} to Postgres: each worker core needs ${fmt(
      m.postgres / m.worker,
      2,
    )} Postgres cores beside it. With 2 workers and 2 Postgres cores (4 cores): ${fmt(two)} req/s, ${ratio(
      two,
      one,
    )} of 1 worker on the same Postgres cores: ${
      two / one >= TARGET_RATIO
        ? `the ≥ ${TARGET_RATIO}× of part 3, when Postgres has room for both`
        : 2000 / m.postgres <= 2000 / m.worker
          ? `below ${TARGET_RATIO}×: Postgres binds first`
          : `below ${TARGET_RATIO}×: the workers bind, at the 2-worker cost per request of part 2 (the cross-worker tax above), measured with every process on this machine's 2 saturated cores`
    }.`,
    `- Assumed: Postgres' CPU work spreads over its cores (each connection is its own backend process); the workers share nothing but the database; the CPU per request stays at the full-speed figures as the load grows (it may fall: the store and Postgres batch more commits per transaction and per flush under more load; it rises when requests wait longer, as the capped runs show); the load generator (${fmt(
      params.loadGenerator,
      3,
    )} ms per request here) and the kernel's share (${fmt(params.kernel, 3)} ms) are left out.`,
    `- Ignored: the WAL flush device (its latency and the one-at-a-time flushes; see the estimate above: on more cores it becomes the ceiling once the CPU limits pass it, unless group commit packs more commits per flush), lock waits (the NOTIFY queue lock and row locks; part 2 shows their share), network round trips between hosts (each request's commits wait for one), memory bandwidth and caches, and the closed loop's connection count (${r.config.throughput.connections} connections must be enough to keep every core busy: by Little's law, ${fmt(
      separate[separate.length - 1]?.predicted,
    )} req/s at the ${ms(responseMs)} ms mean response of part 2's 1-worker runs takes about ${fmt(
      ((separate[separate.length - 1]?.predicted ?? 0) * responseMs) / 1000,
    )} requests in flight). It is an upper bound from CPU; the tables above show how far below it this machine lands.`,
    '',
  );
  return lines;
}
