namespace Jackdaw.Client;

/// <summary>The server's answer for one index written by <see cref="MaintenanceOperations.PutIndexesAsync(IndexDefinition[])"/>.</summary>
public sealed class PutIndexResult
{
    /// <summary>The name of the index written.</summary>
    public string Index { get; set; } = "";
}
