/*
 * A Sparrow frontend that behaves like the original 2013 Java frontend
 * library (SparrowFrontendClient): at start it opens a fixed pool of 8
 * framed, binary-protocol connections to the scheduler's SchedulerService and
 * never opens another. Any thread takes a connection from the pool for a
 * submitJob and puts it back afterwards; a connection whose call failed at the
 * transport is NOT put back, so each such failure shrinks the pool for good.
 * It serves FrontendService with a TThreadedSelectorServer (framed, binary) and
 * registers it once, over a pooled connection.
 *
 * It then runs the phases the interoperability test needs:
 *   before-idle  --tasks tasks in jobs of --job-size, submitted concurrently
 *                across the pool, each task answered by one frontend message;
 *   (idle)       --idle-seconds with no traffic at all, so every pooled
 *                connection sits unused, as a frontend's does overnight;
 *   after-idle   the same again, over the same connections;
 *   big-job      one submitJob of --big-tasks tasks of --big-message-bytes
 *                each (about 10 MiB), which the original Java transport can
 *                send (its frame limit is 16,384,000 bytes);
 *   saturated    --saturated-jobs jobs of --job-size tasks, submitted across
 *                the pool as fast as it allows, against a fleet that cannot
 *                keep up: the scheduler holds each submitJob until the job's
 *                reservations are placed, so the pool's 8 threads slow to the
 *                fleet's pace. With --refusals-ok true, a job refused as saturated
 *                (IncompleteRequestException saying so, past the scheduler's
 *                hold bounds) is counted, not a failure; none of its tasks may
 *                ever send a message;
 * and prints one JSON line summarising them on stdout (progress goes to
 * stderr). A phase with no tasks, and an idle pause of 0, are skipped. Exit
 * status 0 when every check passed, 1 otherwise, 2 for bad usage.
 *
 * Two deliberate differences from the original, both so the test is bounded
 * and can run against a scheduler that has just started: a wait for a pooled
 * connection gives up when none are left or a deadline passes (the original
 * waited forever, which is how its callers hung), and the scheduler's
 * IncompleteRequestException "no live node monitor hosts app" (gossip has not
 * yet told it about the node monitors) is retried for --ready-timeout-seconds.
 * A declared exception leaves the connection in step, so it goes back to the
 * pool.
 *
 * Written for sparrowfleet; it contains no code from the original project.
 */
package sparrowfleet.interop;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.zip.CRC32;

import org.apache.thrift.TException;
import org.apache.thrift.TSerializer;
import org.apache.thrift.protocol.TBinaryProtocol;

import sparrowfleet.thrift.FrontendService;
import sparrowfleet.thrift.IncompleteRequestException;
import sparrowfleet.thrift.SchedulerService;
import sparrowfleet.thrift.TFullTaskId;
import sparrowfleet.thrift.TSchedulingRequest;
import sparrowfleet.thrift.TTaskSpec;
import sparrowfleet.thrift.TUserGroupInfo;

public final class InteropFrontend implements FrontendService.Iface {
  private static final String USAGE =
      "usage: InteropFrontend --scheduler host:port --listen-host HOST [--app APP] [--pool 8]\n"
          + "  [--tasks 300] [--job-size 10] [--idle-seconds 70] [--big-tasks 10000]\n"
          + "  [--big-message-bytes 1024] [--phase-timeout-seconds 30] [--big-timeout-seconds 60]\n"
          + "  [--ready-timeout-seconds 20] [--rpc-timeout-ms 20000] [--settle-ms 500]\n"
          + "  [--saturated-jobs 0] [--saturated-timeout-seconds 60] [--refusals-ok false]";

  /** What a refusal past the scheduler's hold bounds says (scheduler/hold.go). */
  private static final String SATURATED = "saturated";

  /** Failure messages kept for the summary; the count is always exact. */
  private static final int MAX_FAILURES_LISTED = 20;

  /** One submitted task and the frontend message it must produce. */
  private static final class Task {
    final Phase phase;
    final String expectedBody;
    boolean accepted; // guarded by lock
    boolean refused; // guarded by lock: its job was refused as saturated
    int messages; // guarded by lock

    Task(Phase phase, String expectedBody) {
      this.phase = phase;
      this.expectedBody = expectedBody;
    }
  }

  /** What one phase did; counters guarded by lock. */
  private static final class Phase {
    final String name;
    int jobs;
    int jobsAccepted;
    int tasks;
    int tasksAccepted;
    int messages; // first messages for this phase's tasks
    int awaiting; // accepted tasks with no message yet
    int submitFailures;
    int refusals; // jobs refused as saturated, with --refusals-ok
    String firstFailure = "";
    String firstRefusal = "";
    long maxSubmitMillis; // the longest submitJob call, held ones included
    double seconds;

    Phase(String name) {
      this.name = name;
    }

    String json() {
      return "{\"name\":" + Interop.json(name) + ",\"jobs\":" + jobs + ",\"jobs_accepted\":" + jobsAccepted
          + ",\"tasks\":" + tasks + ",\"tasks_accepted\":" + tasksAccepted + ",\"messages\":" + messages
          + ",\"missing\":" + awaiting + ",\"submit_failures\":" + submitFailures
          + ",\"first_failure\":" + Interop.json(firstFailure)
          + ",\"refusals\":" + refusals + ",\"first_refusal\":" + Interop.json(firstRefusal)
          + ",\"max_submit_ms\":" + maxSubmitMillis
          + ",\"seconds\":" + String.format("%.2f", seconds) + "}";
    }
  }

  private final String app;
  private final int poolSize;
  private final long readyDeadline;
  private boolean refusalsOk; // set before any phase runs

  /** The fixed pool, as the original's: filled once, never refilled. */
  private final BlockingQueue<SchedulerService.Client> clients = new LinkedBlockingQueue<>();
  /** Pooled connections not lost to a failed call (in the pool or in use). */
  private final AtomicInteger live = new AtomicInteger();

  private final Object lock = new Object();
  private final Map<String, Task> tasks = new HashMap<>(); // by task id
  private final List<Phase> phases = new ArrayList<>();
  private final List<String> failures = new ArrayList<>();
  private int failureCount;
  private int duplicates;
  private int unexpected;
  private int badMessages;

  private InteropFrontend(String app, int poolSize, long readyDeadline) {
    this.app = app;
    this.poolSize = poolSize;
    this.readyDeadline = readyDeadline;
  }

  @Override
  public void frontendMessage(TFullTaskId taskId, int status, ByteBuffer message) {
    byte[] b = new byte[message.remaining()];
    message.duplicate().get(b);
    String body = new String(b, StandardCharsets.UTF_8);
    synchronized (lock) {
      Task t = tasks.get(taskId.getTaskId());
      if (t == null) {
        unexpected++;
        fail("frontendMessage for unknown task " + taskId.getTaskId() + " (status " + status + ")");
        return;
      }
      if (status != Interop.STATUS_APP || !body.equals(t.expectedBody) || !app.equals(taskId.getAppId())) {
        badMessages++;
        fail("frontendMessage for task " + taskId.getTaskId() + ": app " + taskId.getAppId() + ", status "
            + status + ", body " + body + "; want app " + app + ", status 0, body " + t.expectedBody);
      }
      t.messages++;
      if (t.refused) {
        fail("frontendMessage for task " + taskId.getTaskId() + " of a job refused as saturated");
      }
      if (t.messages > 1) {
        duplicates++;
        fail("task " + taskId.getTaskId() + " got frontend message number " + t.messages);
        return;
      }
      t.phase.messages++;
      if (t.accepted) {
        t.phase.awaiting--;
        lock.notifyAll();
      }
    }
  }

  /** Records a failure; callers hold lock or are single-threaded. */
  private void fail(String what) {
    synchronized (lock) {
      failureCount++;
      if (failures.size() < MAX_FAILURES_LISTED) {
        failures.add(what);
      }
    }
    Interop.log("frontend", "FAIL: " + what);
  }

  /** Fills the pool and registers the frontend over one of its connections. */
  private void initialize(InetSocketAddress scheduler, String frontendAddr, int timeoutMillis)
      throws TException {
    for (int i = 0; i < poolSize; i++) {
      clients.add(new SchedulerService.Client(Interop.connect(scheduler, timeoutMillis)));
      live.incrementAndGet();
    }
    if (!clients.peek().registerFrontend(app, frontendAddr)) {
      throw new TException("scheduler " + scheduler.getHostString() + ":" + scheduler.getPort()
          + " refused registerFrontend(" + app + ", " + frontendAddr + ")");
    }
  }

  /**
   * Takes a pooled connection, waiting while others are in use; null once no
   * connection is left or at the deadline (the original waited forever).
   */
  private SchedulerService.Client takeClient(long deadline, StringBuilder why) throws InterruptedException {
    while (true) {
      SchedulerService.Client c = clients.poll(50, TimeUnit.MILLISECONDS);
      if (c != null) {
        return c;
      }
      if (live.get() == 0) {
        why.append("no pooled connection left: all ").append(poolSize)
            .append(" were lost to failed calls, and the original client never reopens one");
        return null;
      }
      if (System.nanoTime() > deadline) {
        why.append("timed out waiting for a pooled connection");
        return null;
      }
    }
  }

  /** Prefixes what submitRequest returns for a job refused as saturated. */
  private static final String REFUSED_SATURATED = "refused as saturated: ";

  /**
   * Submits one job over a pooled connection; returns null on success or
   * what went wrong. As in the original, a connection whose call failed at
   * the transport is dropped, not returned to the pool.
   */
  private String submitRequest(TSchedulingRequest req, long deadline) throws InterruptedException {
    while (true) {
      StringBuilder why = new StringBuilder();
      SchedulerService.Client client = takeClient(deadline, why);
      if (client == null) {
        return why.toString();
      }
      try {
        client.submitJob(req);
        clients.put(client);
        return null;
      } catch (IncompleteRequestException e) {
        clients.put(client);
        String msg = String.valueOf(e.getMessage());
        if (msg.contains(Interop.NO_NODE_YET) && System.nanoTime() < readyDeadline) {
          Thread.sleep(50); // retry backoff while gossip catches up, not synchronisation
          continue;
        }
        return (msg.contains(SATURATED) ? REFUSED_SATURATED : "submitJob refused: ") + msg;
      } catch (TException e) {
        live.decrementAndGet();
        client.getOutputProtocol().getTransport().close();
        return "submitJob failed (connection dropped from the pool, " + live.get() + " left): "
            + Interop.describe(e);
      }
    }
  }

  /**
   * Submits jobs concurrently across the pool, then waits until every task of
   * an accepted job has sent its frontend message, or the timeout passes.
   */
  private Phase runPhase(String name, List<TSchedulingRequest> jobs, Map<String, String> expected,
      long timeoutMillis) throws Exception {
    Phase p = new Phase(name);
    synchronized (lock) {
      phases.add(p);
      for (TSchedulingRequest job : jobs) {
        for (TTaskSpec spec : job.getTasks()) {
          tasks.put(spec.getTaskId(), new Task(p, expected.get(spec.getTaskId())));
        }
      }
    }
    long start = System.nanoTime();
    long deadline = start + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
    ExecutorService submitters = Executors.newFixedThreadPool(Math.min(poolSize, jobs.size()));
    List<Future<String>> results = new ArrayList<>();
    for (TSchedulingRequest job : jobs) {
      results.add(submitters.submit(() -> {
        long t0 = System.nanoTime();
        String err = submitRequest(job, deadline);
        long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
        synchronized (lock) {
          p.maxSubmitMillis = Math.max(p.maxSubmitMillis, ms);
        }
        return err;
      }));
    }
    for (int i = 0; i < jobs.size(); i++) {
      String err = results.get(i).get();
      TSchedulingRequest job = jobs.get(i);
      synchronized (lock) {
        p.jobs++;
        p.tasks += job.getTasksSize();
        if (err != null && refusalsOk && err.startsWith(REFUSED_SATURATED)) {
          p.refusals++;
          if (p.firstRefusal.isEmpty()) {
            p.firstRefusal = err;
          }
          for (TTaskSpec spec : job.getTasks()) {
            Task t = tasks.get(spec.getTaskId());
            t.refused = true;
            if (t.messages > 0) {
              fail(name + ": task " + spec.getTaskId() + " of a job refused as saturated sent a message");
            }
          }
          continue;
        }
        if (err != null) {
          p.submitFailures++;
          if (p.firstFailure.isEmpty()) {
            p.firstFailure = err;
          }
          fail(name + ": job of " + job.getTasksSize() + " tasks (first " + job.getTasks().get(0).getTaskId()
              + "): " + err);
          continue;
        }
        p.jobsAccepted++;
        p.tasksAccepted += job.getTasksSize();
        for (TTaskSpec spec : job.getTasks()) {
          Task t = tasks.get(spec.getTaskId());
          t.accepted = true;
          if (t.messages == 0) {
            p.awaiting++;
          }
        }
      }
    }
    submitters.shutdown();
    synchronized (lock) {
      while (p.awaiting > 0) {
        long left = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
        if (left <= 0) {
          fail(name + ": timed out after " + timeoutMillis + " ms with " + p.awaiting + " of "
              + p.tasksAccepted + " accepted tasks still without a frontend message");
          break;
        }
        lock.wait(left);
      }
      p.seconds = (System.nanoTime() - start) / 1e9;
      Interop.log("frontend", name + ": " + p.json());
    }
    return p;
  }

  /** Jobs of jobSize tasks with short messages, ids "<prefix>-j<n>-t<m>". */
  private static List<TSchedulingRequest> smallJobs(String app, String prefix, int n, int jobSize,
      Map<String, String> expected) {
    List<TSchedulingRequest> jobs = new ArrayList<>();
    for (int j = 0; j * jobSize < n; j++) {
      List<TTaskSpec> specs = new ArrayList<>();
      for (int t = 0; t < jobSize && j * jobSize + t < n; t++) {
        String id = String.format("%s-j%03d-t%02d", prefix, j, t);
        specs.add(spec(id, ("msg:" + id).getBytes(StandardCharsets.UTF_8), expected));
      }
      jobs.add(request(app, specs, prefix));
    }
    return jobs;
  }

  /** One job of n tasks whose messages are size bytes each, distinct per task. */
  private static TSchedulingRequest bigJob(String app, int n, int size, Map<String, String> expected) {
    List<TTaskSpec> specs = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      String id = String.format("big-t%05d", i);
      byte[] msg = new byte[size];
      byte[] seed = (id + ";").getBytes(StandardCharsets.UTF_8);
      for (int k = 0; k < size; k++) {
        msg[k] = seed[k % seed.length];
      }
      specs.add(spec(id, msg, expected));
    }
    return request(app, specs, "big-job");
  }

  private static TTaskSpec spec(String id, byte[] msg, Map<String, String> expected) {
    CRC32 crc = new CRC32();
    crc.update(msg);
    expected.put(id, "done:" + id + ":" + msg.length + ":" + Long.toHexString(crc.getValue()));
    TTaskSpec s = new TTaskSpec();
    s.setTaskId(id);
    s.setMessage(msg);
    return s;
  }

  private static TSchedulingRequest request(String app, List<TTaskSpec> specs, String what) {
    TSchedulingRequest r = new TSchedulingRequest(app, specs, new TUserGroupInfo("interop", "interop", 0));
    r.setDescription("jvm interop " + what);
    return r;
  }

  private String summary(int idleSeconds, boolean bigAccepted, long bigBytes) {
    synchronized (lock) {
      int submitted = 0;
      int accepted = 0;
      int messages = 0;
      int missing = 0;
      int submitFailures = 0;
      int refusals = 0;
      StringBuilder ph = new StringBuilder("[");
      for (Phase p : phases) {
        submitted += p.tasks;
        accepted += p.tasksAccepted;
        messages += p.messages;
        missing += p.awaiting;
        submitFailures += p.submitFailures;
        refusals += p.refusals;
        ph.append(ph.length() > 1 ? "," : "").append(p.json());
      }
      ph.append("]");
      StringBuilder fl = new StringBuilder("[");
      for (String f : failures) {
        fl.append(fl.length() > 1 ? "," : "").append(Interop.json(f));
      }
      fl.append("]");
      boolean ok = failureCount == 0 && bigAccepted;
      return "{\"ok\":" + ok + ",\"pool\":" + poolSize + ",\"pool_left\":" + live.get()
          + ",\"idle_seconds\":" + idleSeconds + ",\"tasks_submitted\":" + submitted
          + ",\"tasks_accepted\":" + accepted + ",\"messages\":" + messages + ",\"missing\":" + missing
          + ",\"duplicates\":" + duplicates + ",\"unexpected\":" + unexpected + ",\"bad_messages\":" + badMessages
          + ",\"submit_failures\":" + submitFailures + ",\"refusals\":" + refusals
          + ",\"big_job_accepted\":" + bigAccepted
          + ",\"big_job_bytes\":" + bigBytes + ",\"failure_count\":" + failureCount + ",\"failures\":" + fl
          + ",\"phases\":" + ph + "}";
    }
  }

  public static void main(String[] argv) throws Exception {
    Map<String, String> d = new LinkedHashMap<>();
    d.put("scheduler", null);
    d.put("listen-host", null);
    d.put("app", "jvminterop");
    d.put("pool", "8");
    d.put("tasks", "300");
    d.put("job-size", "10");
    d.put("idle-seconds", "70");
    d.put("big-tasks", "10000");
    d.put("big-message-bytes", "1024");
    d.put("phase-timeout-seconds", "30");
    d.put("big-timeout-seconds", "60");
    d.put("ready-timeout-seconds", "20");
    d.put("rpc-timeout-ms", "20000");
    d.put("settle-ms", "500");
    d.put("saturated-jobs", "0");
    d.put("saturated-timeout-seconds", "60");
    d.put("refusals-ok", "false");
    Map<String, String> f = Interop.flags(argv, d, USAGE);
    String app = f.get("app");
    String host = f.get("listen-host");
    int idle = Integer.parseInt(f.get("idle-seconds"));
    int taskCount = Integer.parseInt(f.get("tasks"));
    int jobSize = Integer.parseInt(f.get("job-size"));
    int bigTasks = Integer.parseInt(f.get("big-tasks"));
    long phaseTimeout = TimeUnit.SECONDS.toMillis(Long.parseLong(f.get("phase-timeout-seconds")));
    InetSocketAddress scheduler = Interop.parseAddr("--scheduler", f.get("scheduler"));

    long ready = System.nanoTime() + TimeUnit.SECONDS.toNanos(Long.parseLong(f.get("ready-timeout-seconds")));
    InteropFrontend fe = new InteropFrontend(app, Integer.parseInt(f.get("pool")), ready);
    fe.refusalsOk = Boolean.parseBoolean(f.get("refusals-ok"));
    int port = Interop.serve(host, new FrontendService.Processor<>(fe), 8, "frontend-server");
    String addr = host + ":" + port;
    fe.initialize(scheduler, addr, Integer.parseInt(f.get("rpc-timeout-ms")));
    Interop.log("frontend", "serving FrontendService at " + addr + "; " + fe.poolSize
        + " pooled connections to " + f.get("scheduler"));

    Map<String, String> expected = new HashMap<>();
    if (taskCount > 0) {
      fe.runPhase("before-idle", smallJobs(app, "p1", taskCount, jobSize, expected), expected, phaseTimeout);
    }

    if (idle > 0) {
      Interop.log("frontend", "idle for " + idle + " s: no calls on any connection");
      Thread.sleep(TimeUnit.SECONDS.toMillis(idle)); // the idle period is what is being tested
    }

    if (taskCount > 0) {
      fe.runPhase("after-idle", smallJobs(app, "p2", taskCount, jobSize, expected), expected, phaseTimeout);
    }

    boolean bigAccepted = false;
    long bigBytes = 0;
    if (bigTasks > 0) {
      TSchedulingRequest big = bigJob(app, bigTasks, Integer.parseInt(f.get("big-message-bytes")), expected);
      bigBytes = new TSerializer(new TBinaryProtocol.Factory()).serialize(big).length;
      Interop.log("frontend", "big-job: one submitJob of " + bigTasks + " tasks, " + bigBytes + " bytes of request");
      Phase p = fe.runPhase("big-job", List.of(big), expected,
          TimeUnit.SECONDS.toMillis(Long.parseLong(f.get("big-timeout-seconds"))));
      bigAccepted = p.jobsAccepted == 1;
    } else {
      bigAccepted = true; // not asked for
    }

    int saturatedJobs = Integer.parseInt(f.get("saturated-jobs"));
    if (saturatedJobs > 0) {
      fe.runPhase("saturated", smallJobs(app, "sat", saturatedJobs * jobSize, jobSize, expected), expected,
          TimeUnit.SECONDS.toMillis(Long.parseLong(f.get("saturated-timeout-seconds"))));
    }

    // A quiet moment to catch late duplicates; a quiescence window, not synchronisation.
    Thread.sleep(Long.parseLong(f.get("settle-ms")));
    String s = fe.summary(idle, bigAccepted, bigBytes);
    System.out.println(s);
    System.out.flush();
    for (SchedulerService.Client c; (c = fe.clients.poll()) != null; ) {
      c.getOutputProtocol().getTransport().close();
    }
    System.exit(s.startsWith("{\"ok\":true") ? 0 : 1);
  }
}
