namespace Jackdaw.Server.Databases;

/// <summary>Where a long-running operation (a bulk insert) stands; RavenDB's names, as its clients read them.</summary>
public enum OperationStatus
{
    InProgress,
    Completed,
    Faulted,
    Canceled,
}
