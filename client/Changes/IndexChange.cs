namespace Jackdaw.Client;

/// <summary>Something happened to an index on the server.</summary>
public sealed class IndexChange
{
    public IndexChangeTypes Type { get; init; }

    public string Name { get; init; } = "";

    public override string ToString() => $"{Type} on {Name}";
}
