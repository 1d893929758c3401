namespace Jackdaw.Client;

/// <summary>
/// A database analyzer that index fields name (<see cref="IndexFieldOptions.Analyzer"/>), as RavenDB's
/// <c>AnalyzerDefinition</c>. Jackdaw's server compiles no C#: <see cref="Code"/> is a built-in
/// analyzer's name (<c>"WhitespaceAnalyzer"</c>) or a JSON chain of Lucene parts, such as
/// <c>{"Tokenizer":"Whitespace","TokenFilters":["LowerCase","ASCIIFolding"]}</c>
/// (server/Indexing/Analysis/README.md lists the parts).
/// </summary>
public sealed class AnalyzerDefinition
{
    /// <summary>The name fields use; not a built-in analyzer's.</summary>
    public string Name { get; set; } = "";

    /// <summary>A built-in analyzer's name, or the JSON description of a chain of Lucene parts.</summary>
    public string Code { get; set; } = "";
}
