namespace Jackdaw.Server.Databases;

/// <summary>
/// A database name as a dictionary key, compared case-insensitively (ordinal). It holds the
/// characters where they are, so a lookup by a slice of the request path copies nothing.
/// </summary>
internal readonly struct DatabaseNameKey(ReadOnlyMemory<char> name)
{
    public static readonly IEqualityComparer<DatabaseNameKey> Comparer = new NameComparer();

    public DatabaseNameKey(string name)
        : this(name.AsMemory())
    {
    }

    public ReadOnlyMemory<char> Name { get; } = name;

    public override string ToString() => Name.ToString();

    private sealed class NameComparer : IEqualityComparer<DatabaseNameKey>
    {
        public bool Equals(DatabaseNameKey x, DatabaseNameKey y) =>
            x.Name.Span.Equals(y.Name.Span, StringComparison.OrdinalIgnoreCase);

        public int GetHashCode(DatabaseNameKey key) =>
            string.GetHashCode(key.Name.Span, StringComparison.OrdinalIgnoreCase);
    }
}
