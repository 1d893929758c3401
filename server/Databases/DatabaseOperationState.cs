namespace Jackdaw.Server.Databases;

/// <summary>
/// An operation as it stands at one moment: what <c>operations/state</c> answers and what the
/// changes feed publishes (RavenDB's <c>OperationStatusChange</c>).
/// </summary>
/// <param name="OperationId">The operation's id.</param>
/// <param name="Status">In progress, or how it ended.</param>
/// <param name="Progress">Its counts; once it ended, what it had committed.</param>
/// <param name="Failure">Why it failed or was cancelled; null otherwise.</param>
/// <param name="Details">For an operation other than a bulk insert: its progress and result as it describes them; null for a bulk insert.</param>
public sealed record DatabaseOperationState(long OperationId, OperationStatus Status, BulkInsertProgress Progress, OperationFailure? Failure, OperationDetails? Details = null);
