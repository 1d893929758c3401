using System.Text.Json;
using System.Text.RegularExpressions;
using Jackdaw.Server.Errors;
using Jint;
using Jint.Runtime;

namespace Jackdaw.Server.Patching;

/// <summary>
/// A patch script, parsed once and run for any number of documents (RavenDB's <c>PatchRequest</c>:
/// <c>{"Script":"this.Freight += args.Inc","Values":{"Inc":1}}</c>, or the body of a query's
/// <c>update { ... }</c>). The script is the body of a function whose <c>this</c> is the document,
/// whose <c>args</c> are the values, and which also receives each query parameter as
/// <c>$name</c> and the document under the query's alias, when there is one.
/// </summary>
public sealed partial class PatchScript
{
    // The script starts on the wrapper's second line: Jint's line numbers are one more than the script's.
    private const int WrapperLines = 1;

    private PatchScript(string text, Prepared<Acornima.Ast.Script> prepared, string valuesJson, string[] parameters, bool hasAlias)
    {
        Text = text;
        Prepared = prepared;
        ValuesJson = valuesJson;
        Parameters = parameters;
        HasAlias = hasAlias;
    }

    /// <summary>The script as the client sent it.</summary>
    public string Text { get; }

    /// <summary>The wrapper function, parsed once (Jint shares a prepared script between engines).</summary>
    internal Prepared<Acornima.Ast.Script> Prepared { get; }

    /// <summary>The values as JSON (an object), parsed into each run's <c>args</c>.</summary>
    internal string ValuesJson { get; }

    /// <summary>The query parameters passed as <c>$name</c>, in the wrapper's order after <c>args</c>.</summary>
    internal string[] Parameters { get; }

    /// <summary>Whether the wrapper's last parameter is the query's alias for the document.</summary>
    internal bool HasAlias { get; }

    [GeneratedRegex(@"^[A-Za-z_][A-Za-z0-9_]*$")]
    private static partial Regex Identifier();

    /// <summary>Parses <paramref name="script"/> with <paramref name="values"/> (an object, or null for none).</summary>
    /// <param name="alias">The query's alias for the document (<c>from Orders as o update { o.Freight++ }</c>), or null.</param>
    /// <exception cref="Errors.PatchScriptException">The script does not parse; the message names the line.</exception>
    /// <exception cref="BadRequestException"><paramref name="values"/> is not an object.</exception>
    public static PatchScript Compile(string script, JsonElement? values, string? alias, string where)
    {
        var valuesJson = "{}";
        string[] parameters = [];
        if (values is { ValueKind: not JsonValueKind.Null and not JsonValueKind.Undefined } given)
        {
            if (given.ValueKind != JsonValueKind.Object)
            {
                throw new BadRequestException($"{where}: 'Values' must be an object of the values the script reads as args.name, not {given.ValueKind}.");
            }
            valuesJson = given.GetRawText();
            parameters = [.. given.EnumerateObject().Select(p => p.Name).Where(n => Identifier().IsMatch(n) && n != alias).Distinct()];
        }
        if (alias is not null && !Identifier().IsMatch(alias))
        {
            alias = null;
        }

        var arguments = string.Concat(parameters.Select(p => ", $" + p)) + (alias is null ? "" : ", " + alias);
        var source = $"(function (args{arguments}) {{\n{script}\n}})";
        try
        {
            return new PatchScript(script, Engine.PrepareScript(source, "patch"), valuesJson, parameters, alias is not null);
        }
        catch (ScriptPreparationException e) when (e.InnerException is Acornima.ParseErrorException parse)
        {
            throw new Errors.PatchScriptException($"{where}: the script does not parse: {parse.Description} (line {Math.Max(1, parse.LineNumber - WrapperLines)}, column {parse.Column + 1}).", e);
        }
        catch (ScriptPreparationException e)
        {
            throw new Errors.PatchScriptException($"{where}: the script does not parse: {e.Message}", e);
        }
    }

    /// <summary>A line of the wrapper as the script's own line number.</summary>
    internal static int ScriptLine(int wrapperLine) => Math.Max(1, wrapperLine - WrapperLines);
}
