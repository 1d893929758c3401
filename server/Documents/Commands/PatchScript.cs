using System.Text.Json.Nodes;
using System.Text.RegularExpressions;
using Jackdaw.Server.Errors;

namespace Jackdaw.Server.Documents.Commands;

/// <summary>
/// The part of RavenDB's JavaScript patches that Jackdaw runs without a JavaScript engine: the
/// scripts RavenDB's clients generate for <c>session.advanced.patch</c> and <c>increment</c>, one
/// statement per line, each <c>this.path = args.name;</c> or
/// <c>this.path = this.path ? this.path + args.name : args.name;</c>. Anything else is refused with
/// a 400 naming the statement (full JavaScript arrives with the engine the indexes bring).
/// </summary>
public sealed partial class PatchScript
{
    private readonly List<(string[] Path, string Argument, bool Increment)> _statements;
    private readonly JsonObject _values;

    private PatchScript(List<(string[], string, bool)> statements, JsonObject values)
    {
        _statements = statements;
        _values = values;
    }

    [GeneratedRegex(@"^this\.(?<path>[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*)\s*=\s*args\.(?<arg>[A-Za-z_$][\w$]*)$")]
    private static partial Regex Assignment();

    [GeneratedRegex(@"^this\.(?<path>[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*)\s*=\s*this\.\k<path>\s*\?\s*this\.\k<path>\s*\+\s*args\.(?<arg>[A-Za-z_$][\w$]*)\s*:\s*args\.\k<arg>$")]
    private static partial Regex Increment();

    /// <summary>Parses a script and its <c>Values</c>.</summary>
    /// <exception cref="BadRequestException">A statement is not one this server runs, or names a value that is not given.</exception>
    public static PatchScript Parse(string script, JsonObject? values, string where)
    {
        values ??= [];
        var statements = new List<(string[], string, bool)>();
        foreach (var raw in script.Split(['\n', ';'], StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries))
        {
            var increment = Increment().Match(raw);
            var match = increment.Success ? increment : Assignment().Match(raw);
            if (!match.Success)
                throw new BadRequestException($"{where}: the patch statement '{raw}' is not one this server runs. Without a JavaScript engine it runs what RavenDB's clients send for patch and increment: 'this.path = args.name' and 'this.path = this.path ? this.path + args.name : args.name'.");
            var argument = match.Groups["arg"].Value;
            if (!values.ContainsKey(argument))
                throw new BadRequestException($"{where}: the patch uses args.{argument}, which 'Values' does not give.");
            statements.Add((match.Groups["path"].Value.Split('.'), argument, increment.Success));
        }
        return new PatchScript(statements, values);
    }

    /// <summary>Applies the statements to a document (its JSON, <c>@metadata</c> included); false when nothing changed.</summary>
    /// <exception cref="BadRequestException">A path runs through something that is not an object, or an increment meets a value it cannot add to.</exception>
    public bool Apply(JsonObject document, string id)
    {
        var changed = false;
        foreach (var (path, argument, increment) in _statements)
        {
            var parent = document;
            for (var i = 0; i < path.Length - 1; i++)
            {
                if (parent[path[i]] is not JsonObject next)
                {
                    if (parent[path[i]] is not null)
                        throw new BadRequestException($"Patch of '{id}': 'this.{string.Join('.', path[..(i + 1)])}' is not an object.");
                    next = [];
                    parent[path[i]] = next;
                }
                parent = next;
            }

            var name = path[^1];
            var value = _values[argument]?.DeepClone();
            if (increment && parent[name] is { } current && Truthy(current))
                value = Add(current, value, id, string.Join('.', path));
            // Compared as text: DeepEquals compares numbers as doubles, so 2^63-1 would equal 2^63.
            if (!parent.ContainsKey(name) || parent[name]?.ToJsonString() != value?.ToJsonString())
            {
                parent[name] = value;
                changed = true;
            }
        }
        return changed;
    }

    /// <summary>JavaScript's truthiness, for the increment's <c>this.path ? ...</c>.</summary>
    private static bool Truthy(JsonNode node) => node switch
    {
        JsonValue v when v.TryGetValue(out bool b) => b,
        JsonValue v when v.TryGetValue(out double d) => d != 0 && !double.IsNaN(d),
        JsonValue v when v.TryGetValue(out string? s) => !string.IsNullOrEmpty(s),
        _ => true,
    };

    private static JsonNode? Add(JsonNode current, JsonNode? delta, string id, string path)
    {
        if (current is JsonValue a && delta is JsonValue b)
        {
            if (a.TryGetValue(out long x) && b.TryGetValue(out long y))
            {
                // JavaScript numbers do not wrap: past a long, the sum is a double.
                try
                {
                    return JsonValue.Create(checked(x + y));
                }
                catch (OverflowException)
                {
                    return JsonValue.Create((double)x + y);
                }
            }
            if (a.TryGetValue(out double dx) && b.TryGetValue(out double dy))
                return JsonValue.Create(dx + dy);
            if (a.TryGetValue(out string? sx))
                return JsonValue.Create(sx + (b.TryGetValue(out string? sy) ? sy : b.ToJsonString()));
        }
        throw new BadRequestException($"Patch of '{id}': cannot add {delta?.ToJsonString() ?? "null"} to 'this.{path}' ({current.ToJsonString()}).");
    }
}
