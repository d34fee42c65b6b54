/*
 * A Sparrow backend (executor) that behaves like the original 2013 Java
 * backends (SimpleBackend, ProtoBackend): it serves BackendService.launchTask
 * with a TThreadedSelectorServer (framed, binary), opens ONE connection to its
 * node monitor's NodeMonitorService at start, registers over it, and keeps
 * that same connection for its whole life for every sendFrontendMessage and
 * tasksFinished, from a single reporting thread. A call that fails is logged
 * and the connection is kept anyway, as the original did: if the node monitor
 * ever drops an idle connection, every later report from this backend fails,
 * which is exactly what the interoperability test must catch.
 *
 * Written for sparrowfleet; it contains no code from the original project.
 *
 * Protocol with the Go test (stdout, one line each):
 *   registered <host:port>              once, after registerBackend succeeded
 *   launch <taskId> <requestId> <bytes> for every launchTask
 *   finished <taskId>                   sendFrontendMessage and tasksFinished both succeeded
 *   failed <taskId> <detail>            either call failed (the connection is kept regardless)
 *   {"backend":...}                     a JSON summary, on SIGTERM
 * For every task the frontend message is "done:<taskId>:<len>:<crc32 hex>" of
 * the launch message, so the frontend can check the message arrived intact.
 */
package sparrowfleet.interop;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.zip.CRC32;

import org.apache.thrift.TException;

import sparrowfleet.thrift.BackendService;
import sparrowfleet.thrift.NodeMonitorService;
import sparrowfleet.thrift.TFullTaskId;
import sparrowfleet.thrift.TUserGroupInfo;

public final class InteropBackend implements BackendService.Iface {
  private static final String USAGE =
      "usage: InteropBackend --nodemonitor host:port --listen-host HOST [--app APP] [--name NAME]\n"
          + "  [--workers N] [--task-millis MS] [--rpc-timeout-ms MS]";

  /** A launched task and what its frontend message must say. */
  private static final class Done {
    final TFullTaskId id;
    final String body;

    Done(TFullTaskId id, String body) {
      this.id = id;
      this.body = body;
    }
  }

  private final String name;
  private final String app;
  private final int taskMillis;
  /** The one node monitor connection, opened once and never replaced. */
  private final NodeMonitorService.Client client;
  /** Tasks run each in a worker thread, as the original backends did. */
  private final ExecutorService workers;
  /** Finished tasks wait here for the single reporting thread. */
  private final BlockingQueue<Done> finished = new LinkedBlockingQueue<>();

  private final AtomicInteger launched = new AtomicInteger();
  private final AtomicInteger reported = new AtomicInteger();
  private final AtomicInteger failures = new AtomicInteger();
  private final AtomicReference<String> firstFailure = new AtomicReference<>("");

  private InteropBackend(String name, String app, int taskMillis, int workers,
      NodeMonitorService.Client client) {
    this.name = name;
    this.app = app;
    this.taskMillis = taskMillis;
    this.workers = Executors.newFixedThreadPool(workers);
    this.client = client;
  }

  @Override
  public void launchTask(ByteBuffer message, TFullTaskId taskId, TUserGroupInfo user) {
    launched.incrementAndGet();
    byte[] body = new byte[message.remaining()];
    message.duplicate().get(body);
    CRC32 crc = new CRC32();
    crc.update(body);
    out("launch " + taskId.getTaskId() + " " + taskId.getRequestId() + " " + body.length);
    String reply = "done:" + taskId.getTaskId() + ":" + body.length + ":" + Long.toHexString(crc.getValue());
    workers.submit(() -> {
      if (taskMillis > 0) {
        try {
          Thread.sleep(taskMillis); // the task's "work"
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
      finished.add(new Done(taskId, reply));
    });
  }

  /**
   * Reports finished tasks one at a time over the single node monitor
   * connection: the result first, then tasksFinished, which frees the slot.
   */
  private void reportLoop() {
    while (true) {
      Done d;
      try {
        d = finished.take();
      } catch (InterruptedException e) {
        return;
      }
      String failure = null;
      try {
        client.sendFrontendMessage(app, d.id, Interop.STATUS_APP,
            ByteBuffer.wrap(d.body.getBytes(StandardCharsets.UTF_8)));
      } catch (TException e) {
        failure = "sendFrontendMessage: " + Interop.describe(e);
      }
      try {
        client.tasksFinished(Collections.singletonList(d.id));
      } catch (TException e) {
        failure = (failure == null ? "" : failure + "; ") + "tasksFinished: " + Interop.describe(e);
      }
      if (failure == null) {
        out("finished " + d.id.getTaskId());
      } else {
        failures.incrementAndGet();
        firstFailure.compareAndSet("", d.id.getTaskId() + ": " + failure);
        out("failed " + d.id.getTaskId() + " " + failure.replace('\n', ' '));
      }
      reported.incrementAndGet();
    }
  }

  private String summary() {
    return "{\"backend\":" + Interop.json(name) + ",\"launched\":" + launched.get()
        + ",\"reported\":" + reported.get() + ",\"failures\":" + failures.get()
        + ",\"first_failure\":" + Interop.json(firstFailure.get()) + "}";
  }

  private static synchronized void out(String line) {
    System.out.println(line);
  }

  public static void main(String[] argv) throws Exception {
    Map<String, String> d = new LinkedHashMap<>();
    d.put("nodemonitor", null);
    d.put("listen-host", null);
    d.put("app", "jvminterop");
    d.put("name", "backend");
    d.put("workers", "16");
    d.put("task-millis", "1");
    d.put("rpc-timeout-ms", "20000");
    Map<String, String> f = Interop.flags(argv, d, USAGE);
    String name = f.get("name");
    String app = f.get("app");
    String host = f.get("listen-host");
    InetSocketAddress nm = Interop.parseAddr("--nodemonitor", f.get("nodemonitor"));

    NodeMonitorService.Client client =
        new NodeMonitorService.Client(Interop.connect(nm, Integer.parseInt(f.get("rpc-timeout-ms"))));
    InteropBackend backend = new InteropBackend(name, app, Integer.parseInt(f.get("task-millis")),
        Integer.parseInt(f.get("workers")), client);
    int port = Interop.serve(host, new BackendService.Processor<>(backend), 4, name + "-server");
    String addr = host + ":" + port;
    Runtime.getRuntime().addShutdownHook(new Thread(() -> out(backend.summary())));

    if (!client.registerBackend(app, addr)) {
      Interop.log(name, "node monitor " + f.get("nodemonitor") + " refused registerBackend(" + app + ", " + addr + ")");
      System.exit(1);
    }
    out("registered " + addr);
    Interop.log(name, "serving BackendService at " + addr + ", registered with " + f.get("nodemonitor"));
    Thread reporter = new Thread(backend::reportLoop, name + "-reporter");
    reporter.start(); // not a daemon: the backend runs until it is signalled
  }
}
