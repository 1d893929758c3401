using System.Text;

namespace Jackdaw.Server.Routing;

/// <summary>
/// Matches a method and a raw path against route templates with a compressed trie.
/// <para>
/// Each node consumes a literal <see cref="RouteNode{THandler}.Fragment"/>, then continues with the child chosen
/// by the next path character (an array indexed by character, no dictionary), else its <c>*</c> child
/// (one non-empty segment), else its <c>$</c> child (the rest of the path). Literals win over
/// <c>*</c>, which wins over <c>$</c>; a failed branch backtracks. Recursion depth is bounded by the
/// depth of the trie, never by the length of the path.
/// </para>
/// <para>
/// Paths are matched ordinally (case-sensitive). One trailing slash is tolerated: <c>/admin/stats/</c>
/// matches <c>/admin/stats</c>. Captures are (start, length) ranges into the path string.
/// </para>
/// </summary>
public sealed class TrieRouter<THandler>
    where THandler : class
{
    private readonly RouteNode<THandler> _root;

    private TrieRouter(RouteNode<THandler> root, IReadOnlyList<RouteEndpoint<THandler>> endpoints)
    {
        _root = root;
        Endpoints = endpoints;
    }

    /// <summary>Every endpoint, in <see cref="RouteEndpoint{THandler}.Id"/> order (<c>Endpoints[i].Id == i</c>).</summary>
    public IReadOnlyList<RouteEndpoint<THandler>> Endpoints { get; }

    /// <summary>Matches <paramref name="path"/> (the raw, undecoded-by-us path). Allocates nothing.</summary>
    public bool TryMatch(string path, out RouteMatch<THandler> match)
    {
        match = default;
        if (path.Length == 0)
        {
            path = "/";
        }
        return Match(_root, path, 0, ref match);
    }

    private static bool Match(RouteNode<THandler> node, string path, int pos, ref RouteMatch<THandler> match)
    {
        var fragment = node.Fragment;
        if (fragment.Length != 0)
        {
            if (path.Length - pos < fragment.Length || !path.AsSpan(pos, fragment.Length).SequenceEqual(fragment))
            {
                return false;
            }
            pos += fragment.Length;
        }
        return MatchAfterFragment(node, path, pos, ref match);
    }

    private static bool MatchAfterFragment(RouteNode<THandler> node, string path, int pos, ref RouteMatch<THandler> match)
    {
        if (pos == path.Length && node.Endpoint is not null)
        {
            match.Endpoint = node.Endpoint;
            return true;
        }

        if (pos < path.Length)
        {
            var children = node.Children;
            if (children is not null)
            {
                var index = (uint)(path[pos] - node.ChildBase);
                if (index < (uint)children.Length && children[index] is { } child && Match(child, path, pos, ref match))
                {
                    return true;
                }
            }

            if (node.Segment is { } segment)
            {
                var length = path.AsSpan(pos).IndexOf('/');
                if (length < 0)
                {
                    length = path.Length - pos;
                }
                if (length > 0)
                {
                    var saved = match.CaptureCount;
                    match.Push(pos, length);
                    if (Match(segment, path, pos + length, ref match))
                    {
                        return true;
                    }
                    match.Truncate(saved);
                }
            }
        }

        if (node.Rest is { } rest)
        {
            match.Push(pos, path.Length - pos);
            match.Endpoint = rest.Endpoint;
            return true;
        }

        if (pos == path.Length - 1 && path[pos] == '/' && node.Endpoint is not null)
        {
            match.Endpoint = node.Endpoint;
            return true;
        }
        return false;
    }

    /// <summary>Collects routes, then compiles them into a router. Cold path: plain C#.</summary>
    public sealed class Builder
    {
        private readonly BuildNode _root = new();
        private readonly Dictionary<string, RouteEndpoint<THandler>> _endpoints = new(StringComparer.Ordinal);

        public Builder Add(string template, string method, THandler handler) =>
            Add(template, HttpMethodKinds.ParseDeclared(method), handler);

        public Builder Add(string template, HttpMethodKind method, THandler handler)
        {
            ArgumentNullException.ThrowIfNull(handler);
            Validate(template);
            var node = _root;
            var captures = 0;
            foreach (var c in template)
            {
                switch (c)
                {
                    case '*':
                        node = node.Segment ??= new BuildNode();
                        captures++;
                        break;
                    case '$':
                        node = node.Rest ??= new BuildNode();
                        captures++;
                        break;
                    default:
                        if (!node.Literals.TryGetValue(c, out var next))
                        {
                            node.Literals[c] = next = new BuildNode();
                        }
                        node = next;
                        break;
                }
            }
            if (captures > RouteMatch<THandler>.MaxCaptures)
            {
                throw new ArgumentException($"Route '{template}' has {captures} captures; at most {RouteMatch<THandler>.MaxCaptures} are supported.", nameof(template));
            }

            if (!_endpoints.TryGetValue(template, out var endpoint))
            {
                _endpoints[template] = endpoint = new RouteEndpoint<THandler>(template, _endpoints.Count);
            }
            if (node.Endpoint is not null && !ReferenceEquals(node.Endpoint, endpoint))
            {
                throw new ArgumentException($"Route '{template}' is ambiguous with '{node.Endpoint.Template}'.", nameof(template));
            }
            node.Endpoint = endpoint;
            endpoint.Add(method, handler);
            return this;
        }

        public TrieRouter<THandler> Build() => new(Compile(_root, string.Empty), _endpoints.Values.OrderBy(e => e.Id).ToList());

        private static void Validate(string template)
        {
            if (string.IsNullOrEmpty(template) || template[0] != '/')
            {
                throw new ArgumentException($"Route '{template}' must start with '/'.", nameof(template));
            }
            for (var i = 0; i < template.Length; i++)
            {
                var c = template[i];
                if (c is < '!' or > '~' or '?' or '#' or '%')
                {
                    throw new ArgumentException($"Route '{template}' has character '{c}' (U+{(int)c:X4}) at {i}; templates are printable ASCII without '?', '#' or '%'.", nameof(template));
                }
                if (c == '*' && (template[i - 1] != '/' || (i + 1 < template.Length && template[i + 1] != '/')))
                {
                    throw new ArgumentException($"Route '{template}': '*' must be a whole segment.", nameof(template));
                }
                if (c == '$' && i != template.Length - 1)
                {
                    throw new ArgumentException($"Route '{template}': '$' must end the template.", nameof(template));
                }
            }
        }

        private static RouteNode<THandler> Compile(BuildNode node, string fragment)
        {
            var text = new StringBuilder(fragment);
            while (node.Literals.Count == 1 && node.Segment is null && node.Rest is null && node.Endpoint is null)
            {
                var (c, next) = node.Literals.First();
                text.Append(c);
                node = next;
            }

            var compiled = new RouteNode<THandler>
            {
                Fragment = text.ToString(),
                Endpoint = node.Endpoint,
                Segment = node.Segment is null ? null : Compile(node.Segment, string.Empty),
                Rest = node.Rest is null ? null : new RouteNode<THandler> { Fragment = string.Empty, Endpoint = node.Rest.Endpoint },
            };
            if (node.Literals.Count > 0)
            {
                var first = node.Literals.Keys.Min();
                var last = node.Literals.Keys.Max();
                compiled.ChildBase = first;
                compiled.Children = new RouteNode<THandler>?[last - first + 1];
                foreach (var (c, child) in node.Literals)
                {
                    compiled.Children[c - first] = Compile(child, c.ToString());
                }
            }
            return compiled;
        }

        private sealed class BuildNode
        {
            public SortedDictionary<char, BuildNode> Literals { get; } = [];

            public BuildNode? Segment { get; set; }

            public BuildNode? Rest { get; set; }

            public RouteEndpoint<THandler>? Endpoint { get; set; }
        }
    }
}

/// <summary>A compiled trie node. Immutable once built; shared by all request threads.</summary>
internal sealed class RouteNode<THandler>
    where THandler : class
{
    public required string Fragment { get; init; }

    /// <summary>Literal children indexed by <c>character - ChildBase</c>; the first character of each child's fragment.</summary>
    public RouteNode<THandler>?[]? Children { get; set; }

    public char ChildBase { get; set; }

    /// <summary>The <c>*</c> child: entered after one non-empty segment has been captured.</summary>
    public RouteNode<THandler>? Segment { get; init; }

    /// <summary>The <c>$</c> child: captures the rest of the path and ends the match.</summary>
    public RouteNode<THandler>? Rest { get; init; }

    public RouteEndpoint<THandler>? Endpoint { get; init; }
}
