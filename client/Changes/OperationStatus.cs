namespace Jackdaw.Client;

/// <summary>Where a long-running operation on the server (a bulk insert) stands (RavenDB's names).</summary>
public enum OperationStatus
{
    InProgress,
    Completed,
    Faulted,
    Canceled,
}
