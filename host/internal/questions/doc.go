// Package questions holds the questions a running call waits on until a
// person answers: the approvals of `ask` rules and the elicitations of
// servers. One generic [Broker] serves both kinds: it bounds how many a
// principal may have open (across replicas), registers a question,
// shares it with the other replicas through [Shared] when clustered,
// waits for the first answer, the timeout or the caller's end, and takes
// an answer given here or recorded by another replica.
//
// A question belongs to the principal whose call asks, and names who may
// answer it ([MayAnswer]: principal or group names; none means that
// principal alone). Its principal, its answerers and admins see it
// ([MaySee]); only its answerers answer.
//
// The vocabulary of both kinds is here (Approval and its outcomes,
// Elicitation and its answer). A server's elicitation is checked here before anyone sees it
// ([CheckElicitation]: a flat form schema within bounds, an http or https
// URL), and so is the answer ([Elicitation.Check]); the trail keeps what
// was asked and answered without a secret value ([RedactSecrets]).
//
// It sits under the pipeline (which asks) and the host (whose doors list
// and answer). It knows nothing of events, stores or policies: the host
// passes what to announce and how to share. It must never block an
// answer on a waiter, nor let anyone see a question [MaySee] does not
// show it, or answer one [MayAnswer] does not let it.
package questions
