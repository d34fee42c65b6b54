// Package fleetstatus reads a running fleet as an operator sees it, for
// sparrow status and for programs of its own: it joins the gossip as an
// observer (a role schedulers never sample and node monitors never ask
// for tasks), lists every member with its role, addresses, slots and
// apps, asks each member that serves an HTTP endpoint for its /status,
// and sums apps, users and the fleet (View). Render prints a View as
// tables; its JSON form is sparrow status --json's output. Print is
// sparrow status (once, or again and again), and ServeDashboard is
// sparrow ui: the fleet dashboard served by an observer.
package fleetstatus
