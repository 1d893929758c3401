namespace Jackdaw.Client;

/// <summary>The progress a bulk insert reported (<see cref="BulkInsertOperation.OnProgress"/>).</summary>
public sealed class BulkInsertOnProgressEventArgs(BulkInsertProgress progress) : EventArgs
{
    public BulkInsertProgress Progress { get; } = progress;
}
