namespace Jackdaw.Client.Tests.Infrastructure;

/// <summary>
/// Count and total of line amounts per company, over the orders of <c>collection</c> (the corpus
/// orders are stored as CorpusOrders). Its constructor takes the collection, so
/// <see cref="IndexCreation.CreateIndexesAsync(System.Reflection.Assembly, DocumentStore, string?, CancellationToken)"/>
/// leaves it out of this assembly's tasks (it deploys those with a parameterless constructor).
/// </summary>
public sealed class Orders_ByCompany : AbstractJavaScriptIndexCreationTask
{
    public Orders_ByCompany(string collection)
    {
        Maps = new HashSet<string>
        {
            $"map('{collection}', o => ({{ Company: o.Company, Count: 1, Total: o.Lines.reduce((s, l) => s + l.PricePerUnit * l.Quantity, 0) }}))",
        };
        Reduce = """
            groupBy(r => r.Company).aggregate(g => ({
                Company: g.key,
                Count: g.values.reduce((c, r) => c + r.Count, 0),
                Total: g.values.reduce((t, r) => t + r.Total, 0)
            }))
            """;
    }

    /// <summary>A row of the index: what the reduce returns.</summary>
    public sealed class Result
    {
        public string Company { get; set; } = "";

        public int Count { get; set; }

        public double Total { get; set; }
    }
}
