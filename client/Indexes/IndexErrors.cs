namespace Jackdaw.Client;

/// <summary>The recent mapping errors of one index, from <see cref="MaintenanceOperations.GetIndexErrorsAsync"/>.</summary>
public sealed class IndexErrors
{
    public string Name { get; set; } = "";

    public IndexingError[] Errors { get; set; } = [];
}
