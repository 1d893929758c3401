namespace Jackdaw.Client;

/// <summary>
/// What a trial run of an index definition produced, from
/// <see cref="MaintenanceOperations.TestIndexAsync{T}"/>: nothing of it was stored.
/// </summary>
/// <typeparam name="T">What each query result is read as: an entity type (its id property set from <c>@metadata.@id</c>), a projection type, or <see cref="System.Text.Json.JsonElement"/>.</typeparam>
public sealed class TestIndexResult<T>
{
    /// <summary>The name of the tested definition.</summary>
    public string IndexName { get; set; } = "";

    /// <summary>Documents of the mapped collections the trial mapped (at most the <c>maxDocuments</c> asked for).</summary>
    public long DocumentsProcessed { get; set; }

    /// <summary>The query's results over those documents.</summary>
    public T[] QueryResults { get; set; } = [];

    public long TotalResults { get; set; }

    /// <summary>The raw map output of the first documents mapped: the entries each one produced.</summary>
    public TestIndexMapResult[] MapResults { get; set; } = [];

    /// <summary>The documents the maps failed on, and why.</summary>
    public IndexingError[] IndexErrors { get; set; } = [];
}
