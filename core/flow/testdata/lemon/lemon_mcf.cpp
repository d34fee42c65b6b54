// lemon_mcf: the LEMON 1.3 oracle and speed reference for sparrow's
// core/flow. It reads one DIMACS min-cost flow problem ("p min", "n", "a"
// lines, 1-based nodes, lower bounds allowed) from a file or stdin, solves it
// with LEMON's NetworkSimplex and CostScaling, and prints one line per
// algorithm:
//
//   ALGO STATUS COST MIN_NS MEDIAN_NS
//
// STATUS is OPTIMAL, INFEASIBLE or UNBOUNDED; COST is the optimal cost (0
// otherwise); the times are the minimum and median over -r repetitions of
// building the solver and running it, measured with a steady clock and
// excluding all I/O. Usage: lemon_mcf [-r REPS] [-a ns|cs|both] [FILE|-]
#include <lemon/smart_graph.h>
#include <lemon/network_simplex.h>
#include <lemon/cost_scaling.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

using namespace lemon;
typedef SmartDigraph G;
typedef long long ll;

struct Problem {
  int n = -1;
  std::vector<ll> supply;
  std::vector<int> src, dst;
  std::vector<ll> low, cap, cost;
};

static bool readProblem(std::istream& in, Problem& p, std::string& err) {
  std::string line;
  int lineNo = 0;
  while (std::getline(in, line)) {
    lineNo++;
    std::istringstream ss(line);
    std::string kind;
    if (!(ss >> kind) || kind == "c") continue;
    if (kind == "p") {
      std::string fmt; ll m;
      if (!(ss >> fmt >> p.n >> m) || fmt != "min") { err = "bad p line " + std::to_string(lineNo); return false; }
      p.supply.assign(p.n, 0);
    } else if (kind == "n") {
      int v; ll s;
      if (!(ss >> v >> s) || v < 1 || v > p.n) { err = "bad n line " + std::to_string(lineNo); return false; }
      p.supply[v - 1] = s;
    } else if (kind == "a") {
      int u, v; ll l, c, w;
      if (!(ss >> u >> v >> l >> c >> w) || u < 1 || v < 1 || u > p.n || v > p.n) { err = "bad a line " + std::to_string(lineNo); return false; }
      p.src.push_back(u - 1); p.dst.push_back(v - 1);
      p.low.push_back(l); p.cap.push_back(c); p.cost.push_back(w);
    } else { err = "bad line " + std::to_string(lineNo); return false; }
  }
  if (p.n < 0) { err = "no p line"; return false; }
  return true;
}

template <typename Alg>
static const char* statusName(typename Alg::ProblemType t) {
  if (t == Alg::OPTIMAL) return "OPTIMAL";
  if (t == Alg::INFEASIBLE) return "INFEASIBLE";
  return "UNBOUNDED";
}

// solveOnce builds the LEMON graph and maps and runs Alg, timing everything
// after the problem was read.
template <typename Alg>
static void solveOnce(const Problem& p, std::string& status, ll& cost, ll& ns) {
  auto t0 = std::chrono::steady_clock::now();
  G g;
  g.reserveNode(p.n); g.reserveArc(p.src.size());
  std::vector<G::Node> nodes(p.n);
  for (int i = 0; i < p.n; i++) nodes[i] = g.addNode();
  for (size_t i = 0; i < p.src.size(); i++) g.addArc(nodes[p.src[i]], nodes[p.dst[i]]);
  G::ArcMap<ll> low(g), cap(g), c(g);
  G::NodeMap<ll> sup(g);
  for (size_t i = 0; i < p.src.size(); i++) {
    G::Arc a = g.arcFromId(i);
    low[a] = p.low[i]; cap[a] = p.cap[i]; c[a] = p.cost[i];
  }
  for (int i = 0; i < p.n; i++) sup[nodes[i]] = p.supply[i];
  Alg alg(g);
  alg.lowerMap(low).upperMap(cap).costMap(c).supplyMap(sup);
  typename Alg::ProblemType t = alg.run();
  cost = (t == Alg::OPTIMAL) ? alg.template totalCost<ll>() : 0;
  auto t1 = std::chrono::steady_clock::now();
  status = statusName<Alg>(t);
  ns = std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0).count();
}

template <typename Alg>
static void report(const char* name, const Problem& p, int reps) {
  std::vector<ll> times;
  std::string status; ll cost = 0;
  for (int r = 0; r < reps; r++) {
    ll ns;
    solveOnce<Alg>(p, status, cost, ns);
    times.push_back(ns);
  }
  std::sort(times.begin(), times.end());
  std::printf("%s %s %lld %lld %lld\n", name, status.c_str(), cost, times[0], times[times.size() / 2]);
}

int main(int argc, char** argv) {
  int reps = 1;
  std::string algs = "both", file = "-";
  for (int i = 1; i < argc; i++) {
    if (!std::strcmp(argv[i], "-r") && i + 1 < argc) reps = std::max(1, std::atoi(argv[++i]));
    else if (!std::strcmp(argv[i], "-a") && i + 1 < argc) algs = argv[++i];
    else file = argv[i];
  }
  Problem p;
  std::string err;
  bool ok;
  if (file == "-") ok = readProblem(std::cin, p, err);
  else {
    std::ifstream in(file.c_str());
    if (!in) { std::fprintf(stderr, "lemon_mcf: cannot open %s\n", file.c_str()); return 2; }
    ok = readProblem(in, p, err);
  }
  if (!ok) { std::fprintf(stderr, "lemon_mcf: %s\n", err.c_str()); return 2; }
  if (algs == "ns" || algs == "both") report<NetworkSimplex<G, ll, ll> >("ns", p, reps);
  if (algs == "cs" || algs == "both") report<CostScaling<G, ll, ll> >("cs", p, reps);
  return 0;
}
