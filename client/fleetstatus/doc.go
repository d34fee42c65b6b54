// Package fleetstatus reads a running fleet as an operator sees it, for
// sparrow status and for programs of its own: it joins the gossip as an
// observer (a role schedulers never sample and node monitors never ask
// for tasks), lists every member with its role, addresses, slots and
// apps, asks each member that serves an HTTP endpoint for its /status,
// and sums apps, users and the fleet (View). Render prints a View as
// tables; its JSON form is sparrow status --json's output.
package fleetstatus
