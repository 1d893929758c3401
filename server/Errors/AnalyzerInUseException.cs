namespace Jackdaw.Server.Errors;

/// <summary>An analyzer that index definitions name cannot be deleted: change or delete those indexes first.</summary>
public sealed class AnalyzerInUseException : Exception
{
    public AnalyzerInUseException(string name, IReadOnlyList<string> indexes)
        : base($"Analyzer '{name}' is used by the index{(indexes.Count == 1 ? "" : "es")} {string.Join(", ", indexes.Select(i => "'" + i + "'"))}: "
            + "an index opened without it could not be built. Change those definitions to another analyzer, or delete them, first.")
    {
        Name = name;
        Indexes = indexes;
    }

    public string Name { get; }

    public IReadOnlyList<string> Indexes { get; }
}
