/*
 * Shared plumbing of the JVM interoperability clients (InteropFrontend and
 * InteropBackend): connections and servers set up the way the original 2013
 * Sparrow Java library set up its own, so that sparrowfleet's daemons see
 * exactly the traffic that library's frontends and backends produce.
 *
 * Written for sparrowfleet; it contains no code from the original project.
 * Built at test time against the classes `thrift --gen java` makes from
 * thrift/sparrow.thrift (package sparrowfleet.thrift) and Debian's
 * libthrift-java; see README.md in this folder.
 */
package sparrowfleet.interop;

import java.net.InetSocketAddress;
import java.util.HashMap;
import java.util.Map;

import org.apache.thrift.TProcessor;
import org.apache.thrift.protocol.TBinaryProtocol;
import org.apache.thrift.protocol.TProtocol;
import org.apache.thrift.server.TServer;
import org.apache.thrift.server.TThreadedSelectorServer;
import org.apache.thrift.transport.TNonblockingServerSocket;
import org.apache.thrift.transport.TSocket;
import org.apache.thrift.transport.TTransport;
import org.apache.thrift.transport.TTransportException;
import org.apache.thrift.transport.layered.TFramedTransport;

final class Interop {
  /** The application's own frontend-message status (STATUS_APP in the IDL). */
  static final int STATUS_APP = 0;

  /** The scheduler's refusal while gossip has not yet told it where the app runs. */
  static final String NO_NODE_YET = "no live node monitor hosts app";

  private Interop() {}

  /**
   * Opens one client connection the way the original library's TClients did:
   * a TSocket with a read timeout, wrapped in a TFramedTransport, spoken with
   * TBinaryProtocol. The caller keeps it for as long as it likes; nothing here
   * ever reopens it.
   */
  static TProtocol connect(InetSocketAddress addr, int timeoutMillis) throws TTransportException {
    TTransport transport =
        new TFramedTransport(new TSocket(addr.getHostString(), addr.getPort(), timeoutMillis));
    transport.open();
    return new TBinaryProtocol(transport);
  }

  /**
   * Serves processor on host:&lt;free port&gt; with a TThreadedSelectorServer
   * (framed transport, binary protocol), the server the original library
   * used for frontends, in a daemon thread, and returns the bound port. The
   * socket is bound before this returns, so the caller can advertise it.
   */
  static int serve(String host, TProcessor processor, int workerThreads, String name)
      throws TTransportException {
    TNonblockingServerSocket socket = new TNonblockingServerSocket(new InetSocketAddress(host, 0));
    TThreadedSelectorServer.Args args = new TThreadedSelectorServer.Args(socket);
    args.transportFactory(new TFramedTransport.Factory());
    args.protocolFactory(new TBinaryProtocol.Factory());
    args.processor(processor);
    args.selectorThreads(2);
    args.workerThreads(workerThreads);
    TServer server = new TThreadedSelectorServer(args);
    Thread thread = new Thread(server::serve, name);
    thread.setDaemon(true);
    thread.start();
    return socket.getPort();
  }

  /** Parses "host:port". */
  static InetSocketAddress parseAddr(String flag, String value) {
    int colon = value.lastIndexOf(':');
    if (colon <= 0 || colon == value.length() - 1) {
      throw new IllegalArgumentException(flag + " " + value + ": want host:port");
    }
    String host = value.substring(0, colon).replace("[", "").replace("]", "");
    return InetSocketAddress.createUnresolved(host, Integer.parseInt(value.substring(colon + 1)));
  }

  /**
   * Parses "--name value" pairs over defaults; every flag must be one of the
   * defaults' keys, so a typo fails loudly instead of being ignored.
   */
  static Map<String, String> flags(String[] argv, Map<String, String> defaults, String usage) {
    Map<String, String> out = new HashMap<>(defaults);
    for (int i = 0; i < argv.length; i++) {
      String name = argv[i];
      if (name.equals("-h") || name.equals("--help")) {
        System.err.println(usage);
        System.exit(0);
      }
      if (!name.startsWith("--") || !defaults.containsKey(name.substring(2)) || i + 1 == argv.length) {
        System.err.println("bad argument " + name + "\n" + usage);
        System.exit(2);
      }
      out.put(name.substring(2), argv[++i]);
    }
    for (Map.Entry<String, String> e : out.entrySet()) {
      if (e.getValue() == null) {
        System.err.println("--" + e.getKey() + " is required\n" + usage);
        System.exit(2);
      }
    }
    return out;
  }

  /** Quotes s as a JSON string. */
  static String json(String s) {
    StringBuilder b = new StringBuilder("\"");
    for (char c : s.toCharArray()) {
      switch (c) {
        case '"': b.append("\\\""); break;
        case '\\': b.append("\\\\"); break;
        case '\n': b.append("\\n"); break;
        case '\r': b.append("\\r"); break;
        case '\t': b.append("\\t"); break;
        default:
          if (c < 0x20) {
            b.append(String.format("\\u%04x", (int) c));
          } else {
            b.append(c);
          }
      }
    }
    return b.append('"').toString();
  }

  /** A one-line description of an exception, with its cause. */
  static String describe(Throwable e) {
    String s = e.getClass().getSimpleName() + ": " + e.getMessage();
    if (e.getCause() != null && e.getCause() != e) {
      s += " (" + e.getCause().getClass().getSimpleName() + ": " + e.getCause().getMessage() + ")";
    }
    return s;
  }

  static void log(String who, String msg) {
    System.err.println(who + ": " + msg);
  }
}
