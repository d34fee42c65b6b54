// Sparrow wire protocol.
//
// Wire-compatible with the original Sparrow protocol: framed transport, binary
// protocol, one service per listening port (no multiplexing). The structs and
// methods marked "original" must never change name, field id or type.
// Extensions only add new optional fields with new ids, or new methods and
// services; each is marked "extension".
//
// Addresses carried in strings are "host:port".
//
// The Go code in gen-go/ is generated from this file by `make thrift`; never
// edit it by hand.

namespace go sparrowrpc
namespace py sparrowrpc
namespace java sparrowfleet.thrift

// ---- Frontend message status codes (extension: constants only, no wire change).
// The original protocol leaves status to the application; sparrowfleet's own
// components use these values when the fleet itself reports on a task.

// The application's own messages; sparrowfleet never interprets them.
const i32 STATUS_APP = 0
// The fleet lost the task after launching it (its node monitor died or left).
const i32 STATUS_TASK_LOST = 1001
// The executor could not run the task (launchTask failed, executor gone).
const i32 STATUS_TASK_FAILED = 1002

// ---- Types (original)

struct THostPort {
  1: string host,
  2: i32 port,
}

// nodes and racks restrict where a task runs. delayThreshold (ms) is 0 in
// original Sparrow and keeps that meaning (strict preferences). Extension:
// a positive delayThreshold opts the task into relaxation: if it has not
// launched that long after submission it may also run on its preferred
// nodes' racks, and after as long again anywhere; a scheduler holding the
// coordinator's fresh locality prices may relax it sooner.
struct TPlacementPreference {
  1: list<string> nodes,
  2: list<string> racks,
  3: i32 delayThreshold,
  // Extension: bytes of input the task reads from its preferred nodes,
  // which prices the transfer when it runs elsewhere (unset: the
  // scheduler's default).
  4: optional i64 inputBytes,
}

struct TResourceVector {
  1: i64 memory,
  2: i32 cores,
}

struct TFullTaskId {
  1: string taskId,
  2: string requestId,
  3: string appId,
  4: THostPort schedulerAddress,
}

struct TUserGroupInfo {
  1: string user,
  2: string group,
  3: i32 priority,
}

struct TTaskSpec {
  1: string taskId,
  2: TPlacementPreference preference,
  3: binary message,
}

// Extension: a job-level placement constraint over node monitor attributes.
// op is "=" (the attribute's value is one of values), "!=" (it is none of
// values, or the attribute is absent) or "exists" (values ignored).
struct TConstraint {
  1: string key,
  2: string op,
  3: list<string> values,
}

struct TSchedulingRequest {
  1: string app,
  2: list<TTaskSpec> tasks,
  3: TUserGroupInfo user,
  4: optional string description,
  5: optional double probeRatio,
  // Extension: job-level constraints; every task runs on a matching node.
  6: optional list<TConstraint> constraints,
  // Extension: a request id chosen by the frontend, so that it can match
  // frontend messages to jobs. It must be unique among the scheduler's active
  // requests; when absent the scheduler makes one up.
  7: optional string requestId,
  // Extension: the job's estimated mean task duration in seconds, for
  // schedulers run with the long-task-aware policy (--short-jobs), which
  // class the job short or long by it. Absent or not > 0: the scheduler
  // estimates it from the app's past tasks. Other schedulers ignore it.
  8: optional double taskSeconds,
  // Extension: the FrontendService address that receives this job's task
  // messages. A scheduler that sees it reports there, whether or not the
  // frontend registered with it, so a job reaches its frontend through
  // any balancer (a Kubernetes Service, an L4 proxy, DNS round robin)
  // that sends the submit to another scheduler than the registration.
  // Absent: the address the app registered with registerFrontend.
  9: optional string frontendAddress,
  // Extension: what the frontend at frontendAddress serves beyond the
  // original FrontendService, as FRONTEND_* bits. A scheduler calls a
  // frontend's extension methods for this job's messages only when the
  // job carried their bit, and only at frontendAddress; others ignore it.
  10: optional i32 frontendFeatures,
}

// Extension: bits of TSchedulingRequest.frontendFeatures.
// FrontendService.frontendMessages.
const i32 FRONTEND_MESSAGES = 1

// Extension: one message in FrontendService.frontendMessages: the
// arguments of a frontendMessage call.
struct TFrontendMessage {
  1: TFullTaskId taskId,
  2: i32 status,
  3: binary message,
}

struct TEnqueueTaskReservationsRequest {
  1: string appId,
  2: TUserGroupInfo user,
  3: string requestId,
  4: THostPort schedulerAddress,
  5: i32 numTasks,
  // Extension, sent by schedulers with the long-task-aware policy: the
  // job's class (0 short, 1 long), its estimated mean task duration in
  // seconds and its estimated remaining work (unlaunched tasks times that
  // duration, in seconds). A node monitor with the policy orders its queue
  // by remaining work and advertises the long work it holds; others
  // ignore them.
  6: optional i32 jobClass,
  7: optional double taskSeconds,
  8: optional double remainingWork,
  // Extension: what the sending scheduler serves beyond the original
  // SchedulerService and GetTaskService, as SCHEDULER_* bits. A node
  // monitor calls a scheduler's extension methods named here only once
  // a reservation from it carried their bit; others ignore it.
  9: optional i32 schedulerFeatures,
}

// Extension: bits of TEnqueueTaskReservationsRequest.schedulerFeatures.
// SchedulerService.tasksDone.
const i32 SCHEDULER_TASKS_DONE = 1

// Extension: one task's end in SchedulerService.tasksDone: the arguments
// of a taskDone call.
struct TTaskDone {
  1: string app,
  2: TFullTaskId taskId,
  3: i32 status,
  4: binary message,
}

struct TCancelTaskReservationsRequest {
  1: string requestId,
}

// Extension: one job's estimated remaining work in
// InternalService.updateRemainingWork: its unlaunched tasks times their
// estimated duration, in seconds, as
// TEnqueueTaskReservationsRequest.remainingWork.
struct TRemainingWork {
  1: string requestId,
  2: double remainingWork,
}

struct TTaskLaunchSpec {
  1: string taskId,
  2: binary message,
  // Extension, in getTask answers of schedulers with the long-task-aware
  // policy: how many of the job's tasks are still unlaunched after this
  // one, and their estimated duration in seconds. A node monitor with the
  // policy reorders the job's queued reservations by the remaining work,
  // and when this task ends with tasks left, asks for another first.
  3: optional i32 remainingTasks,
  4: optional double taskSeconds,
  // Extension, in answers to a pull (a getTask whose request id names no
  // job but asks the scheduler for a task of any job it chooses): the
  // request id, app and user of the job whose task this is. The node
  // monitor launches and reports the task under them.
  5: optional string requestId,
  6: optional string appId,
  7: optional TUserGroupInfo user,
}

// Extension: the answer to enqueueTaskReservationsWithOffer.
struct TEnqueueOfferReply {
  // As enqueueTaskReservations' answer: false refuses every reservation.
  1: bool accepted,
  // True when a slot free at once took the offered task, using one of the
  // reservations: the node monitor launches it as if getTask had returned
  // it. False declines the offer; the reservations queue as usual.
  2: bool launched,
  // True when the offer was declined because a coordinator guides this
  // node monitor's queue weights, so it will decline every offer while
  // that lasts: a scheduler sends it plain reservations for a while.
  3: optional bool guided,
  // The node monitor process's start nonce, new each time it starts
  // (see TOfferOutcome.boot).
  4: optional string boot,
  // One answer per task of the call's moreOffers, in order: true when a
  // free slot took it, as launched says of the first. Absent (a node
  // monitor that knows no moreOffers) declines them all.
  5: optional list<bool> moreLaunched,
  // How many of this node monitor's slots are free after the call's
  // launches: a scheduler offers it up to that many tasks at once next.
  6: optional i32 freeSlots,
}

// Extension: what a node monitor says of an offer whose answer its
// scheduler did not get (offerOutcome).
struct TOfferOutcome {
  // OFFER_UNSEEN (0): this node monitor process has not received the
  // offer, and will decline it if it arrives; OFFER_DECLINED (1);
  // OFFER_TAKEN (2): it launched the task.
  1: i32 outcome,
  // This process's start nonce. "Unseen" is only conclusive from the
  // process the offer was sent to: a scheduler trusts it when the nonce
  // equals the one in an answer it had from this node monitor before it
  // sent the offer.
  2: string boot,
}

const i32 OFFER_UNSEEN = 0
const i32 OFFER_DECLINED = 1
const i32 OFFER_TAKEN = 2

// Extension: the answer to launchTaskAndWait.
struct TLaunchReply {
  // True when the task ended within the wait: status and message are what
  // the executor would have sent with taskDone, and it reports the task no
  // other way. False: the task runs on, and the executor reports it as
  // after launchTask (taskDone, or tasksFinished and sendFrontendMessage).
  1: bool done,
  2: optional i32 status,
  3: optional binary message,
}

// Extension: one task of launchTasksAndWait: launchTask's arguments.
struct TLaunchItem {
  1: binary message,
  2: TFullTaskId taskId,
  3: TUserGroupInfo user,
}

// Extension: what an executor serves beyond the original BackendService,
// as bits of registerBackendWithFeatures' features.
// launchTaskAndWait.
const i32 BACKEND_LAUNCH_AND_WAIT = 1
// launchTasksAndWait.
const i32 BACKEND_LAUNCH_BATCH = 2

exception IncompleteRequestException {
  1: string message,
  // Extension: why the job was refused, one of the REFUSAL_* codes, so
  // that clients need not parse the message. Absent (older schedulers):
  // clients classify by the message.
  2: optional i32 code,
  // Extension: for REFUSAL_SATURATED and REFUSAL_DRAINING, the delay the
  // scheduler suggests before submitting again, in milliseconds.
  3: optional i64 retryAfterMs,
}

// Refusal codes carried by IncompleteRequestException.code.
const i32 REFUSAL_INVALID = 1
const i32 REFUSAL_SATURATED = 2
const i32 REFUSAL_DRAINING = 3
const i32 REFUSAL_UNKNOWN_APP = 4
const i32 REFUSAL_UNPLACEABLE = 5

// ---- Services (original). Default ports in comments.

// Scheduler, port 20503. Called by frontends and by node monitors.
service SchedulerService {
  bool registerFrontend(1: string app, 2: string socketAddress),
  void submitJob(1: TSchedulingRequest req) throws (1: IncompleteRequestException e),
  void sendFrontendMessage(1: string app, 2: TFullTaskId taskId, 3: i32 status, 4: binary message),
  // Extension: GetTaskService.tasksFinished(nodeMonitorAddress, [taskId])
  // and then sendFrontendMessage, in one call from a node monitor relaying
  // an executor's taskDone: the scheduler records the task finished, then
  // passes the message on, and answers once it is delivered. Saves the
  // node monitor and the scheduler a message per task. A node monitor
  // falls back to the two calls when a scheduler answers UNKNOWN_METHOD.
  void taskDone(1: string app, 2: TFullTaskId taskId, 3: i32 status, 4: binary message, 5: THostPort nodeMonitorAddress),
  // Extension: taskDone for several tasks in one call, which a node
  // monitor gathers over a few milliseconds per scheduler. Called only on
  // a scheduler whose reservations carried SCHEDULER_TASKS_DONE. The
  // scheduler records every task finished, then passes each message on,
  // and answers once all are delivered (or failed: the error names them).
  void tasksDone(1: list<TTaskDone> tasks, 2: THostPort nodeMonitorAddress),
}

// Scheduler, port 20507. Called by node monitors when a reservation reaches
// the front of their queue.
service GetTaskService {
  list<TTaskLaunchSpec> getTask(1: string requestId, 2: THostPort nodeMonitorAddress),
  // Extension: a node monitor reports tasks this scheduler placed that have
  // finished, so that when a node monitor is lost the scheduler knows which
  // tasks it took with it and can report them lost. Batched; oneway.
  oneway void tasksFinished(1: THostPort nodeMonitorAddress, 2: list<TFullTaskId> tasks),
  // Extension: getTask that may be asked again. fetchId names this fetch
  // among the node monitor's (never 0, and not reused by a restarted node
  // monitor process). A node monitor whose call failed asks again with the
  // same fetchId: while the task the first call handed out is recorded as
  // running there, the same task is the answer, so an answer lost on the
  // way neither loses the task nor launches it twice; once it is not (the
  // node monitor was declared lost and the task reported lost), the answer
  // is empty. A node monitor falls back to getTask when a scheduler
  // answers UNKNOWN_METHOD.
  list<TTaskLaunchSpec> fetchTask(1: string requestId, 2: THostPort nodeMonitorAddress, 3: i64 fetchId),
}

// Node monitor, port 20501. Called by executors on the same machine.
service NodeMonitorService {
  bool registerBackend(1: string app, 2: string listenSocket),
  void tasksFinished(1: list<TFullTaskId> tasks),
  void sendFrontendMessage(1: string app, 2: TFullTaskId taskId, 3: i32 status, 4: binary message),
  // Extension: tasksFinished([taskId]) and then sendFrontendMessage, in one
  // call: the node monitor frees the task's slot, then relays the message,
  // and answers once the relay is done. Saves the executor and the node
  // monitor a call per task. An executor falls back to the two original
  // calls when a node monitor answers UNKNOWN_METHOD.
  void taskDone(1: string app, 2: TFullTaskId taskId, 3: i32 status, 4: binary message),
  // Extension: registerBackend from an executor that serves the
  // extensions named by features (BACKEND_* bits). A node monitor calls
  // an executor's extension methods only when it registered with their
  // bit; an executor falls back to registerBackend when a node monitor
  // answers UNKNOWN_METHOD.
  bool registerBackendWithFeatures(1: string app, 2: string listenSocket, 3: i32 features),
}

// Node monitor, port 20502. Called by schedulers.
service InternalService {
  bool enqueueTaskReservations(1: TEnqueueTaskReservationsRequest request),
  void cancelTaskReservations(1: TCancelTaskReservationsRequest request),
  // Extension: enqueueTaskReservations with one of the request's tasks
  // offered. A node monitor with a slot free for the reservation at once
  // launches the offered task without a getTask round trip and answers
  // launched; otherwise it declines and the reservations queue as usual.
  // Saves two hops and a call per task on an idle node monitor. A
  // scheduler falls back to enqueueTaskReservations when a node monitor
  // answers UNKNOWN_METHOD.
  //
  // moreOffers, if any, are further tasks of the same request offered
  // with the same call, one reservation each: a node monitor with several
  // free slots launches as many as it can and declines the rest
  // (TEnqueueOfferReply.moreLaunched). request.numTasks counts a
  // reservation for each offered task.
  TEnqueueOfferReply enqueueTaskReservationsWithOffer(1: TEnqueueTaskReservationsRequest request, 2: TTaskLaunchSpec offer, 3: list<TTaskLaunchSpec> moreOffers),
  // Extension: whether this node monitor took the offer of task taskId of
  // request requestId, for a scheduler whose enqueueTaskReservationsWithOffer
  // call failed after it was sent. "Unseen" and "declined" are final: an
  // offer asked about before it arrives is declined. Answers are kept for
  // a few minutes; a scheduler that gets UNKNOWN_METHOD counts the task
  // launched there, as before this method.
  TOfferOutcome offerOutcome(1: string requestId, 2: string taskId),
  // Extension, sent by schedulers with the long-task-aware policy: the
  // remaining work of jobs holding reservations queued here, sent each
  // time a job's unlaunched tasks enter another power-of-two step. A
  // node monitor with the policy reorders those jobs' queued reservations
  // by it; one without the policy, or with none of a job's reservations
  // queued, ignores the job's entry. A scheduler stops sending them to a
  // node monitor that answers UNKNOWN_METHOD.
  void updateRemainingWork(1: list<TRemainingWork> updates),
}

// Executor, port 20101. Called by its node monitor.
service BackendService {
  void launchTask(1: binary message, 2: TFullTaskId taskId, 3: TUserGroupInfo user),
}

// Extension: what the client library's executors serve beyond
// BackendService, on the same port. A separate service so that code
// generated for an original-style executor (which implements
// BackendService) compiles unchanged against this IDL.
service ExtendedBackendService extends BackendService {
  // Called only on an executor registered with BACKEND_LAUNCH_AND_WAIT:
  // launchTask, after which the executor waits up to waitMicros for the
  // task to end and, if it does, answers with its status and message
  // instead of calling taskDone. Saves the executor and the node monitor a
  // call per quick task. The node monitor then frees the slot and relays
  // the message as taskDone would.
  TLaunchReply launchTaskAndWait(1: binary message, 2: TFullTaskId taskId, 3: TUserGroupInfo user, 4: i32 waitMicros),
  // Called only on an executor registered with BACKEND_LAUNCH_BATCH:
  // launchTaskAndWait for several tasks in one call. The executor launches
  // them all, waits up to waitMicros for them to end, and answers one
  // TLaunchReply per task, in order; a task not done within the wait is
  // reported later as after launchTask. Saves a call per task when a node
  // monitor launches several at once.
  list<TLaunchReply> launchTasksAndWait(1: list<TLaunchItem> tasks, 2: i32 waitMicros),
}

// Frontend, port 50201. Called by schedulers.
service FrontendService {
  void frontendMessage(1: TFullTaskId taskId, 2: i32 status, 3: binary message),
}

// Extension: what the client library's frontends serve beyond
// FrontendService, on the same port. A separate service so that code
// generated for an original-style frontend (which implements
// FrontendService) compiles unchanged against this IDL.
service ExtendedFrontendService extends FrontendService {
  // frontendMessage for several messages in one call, in order. Called
  // only for jobs whose TSchedulingRequest.frontendFeatures carried
  // FRONTEND_MESSAGES. The call fails or succeeds as a whole.
  void frontendMessages(1: list<TFrontendMessage> messages),
}
