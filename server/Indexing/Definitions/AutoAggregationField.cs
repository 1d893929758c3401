namespace Jackdaw.Server.Indexing.Definitions;

/// <summary>
/// An aggregation of an auto map-reduce index: <c>count()</c>, or <c>sum(Path)</c>. It is a field of
/// each entry and of each reduce result, named <see cref="Name"/>.
/// </summary>
public sealed record AutoAggregationField(AggregationOperation Operation, string Path)
{
    /// <summary>The name of the count field (RavenDB's: <c>Auto/Orders/ByCountReducedByCompany</c>).</summary>
    public const string CountName = "Count";

    public static readonly AutoAggregationField Count = new(AggregationOperation.Count, CountName);

    public static AutoAggregationField Sum(string path) => new(AggregationOperation.Sum, path);

    /// <summary>The field's name in entries, results and the index name: <c>Count</c>, or the summed path.</summary>
    public string Name => Operation == AggregationOperation.Count ? CountName : Path;
}
