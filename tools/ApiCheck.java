import java.io.ByteArrayInputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.jar.JarFile;
import java.util.jar.Manifest;
import java.util.stream.Stream;

/**
 * The build's API check, run by every module in {@code verify} (see the parent pom and CONTRIBUTING.md).
 *
 * <ol>
 *   <li>Reads the module's compiled classes (class files only: no class loading, no class path) and writes
 *       its public API as text: every public type outside {@code @io.yarpc.Internal} packages and types,
 *       with its public and protected members and their generic signatures. The module's checked-in
 *       {@code api/<artifactId>.api} must equal it; with {@code --update=true} the file is rewritten
 *       instead.
 *   <li>Fails when a package with an {@code internal} segment is not annotated {@code @Internal}, or when a
 *       public API signature names a type of an internal package (the boundary leaks).
 *   <li>Fails when the module's jar does not carry the expected {@code Automatic-Module-Name}.
 * </ol>
 *
 * Run as a single-file program: {@code java tools/ApiCheck.java --classes=DIR --api=FILE ...}; it needs
 * nothing but the JDK (17+).
 */
public final class ApiCheck {
  private static final String INTERNAL = "io/yarpc/Internal";

  public static void main(String[] argv) throws Exception {
    Map<String, String> args = new HashMap<>();
    for (String a : argv) {
      int eq = a.indexOf('=');
      if (!a.startsWith("--") || eq < 0) {
        throw new IllegalArgumentException("expected --name=value, got " + a);
      }
      args.put(a.substring(2, eq), a.substring(eq + 1));
    }
    if ("pom".equals(args.get("packaging"))) {
      return; // the parent and other pom modules have no classes
    }
    String module = args.getOrDefault("module", "?");
    List<String> problems = new ArrayList<>();

    String moduleName = args.get("module-name");
    String jar = args.get("jar");
    if (moduleName != null && jar != null) {
      checkModuleName(Path.of(jar), moduleName, problems);
    }

    Path classes = Path.of(args.get("classes"));
    Api api = Api.read(classes);
    problems.addAll(api.boundaryProblems());

    if (Boolean.parseBoolean(args.getOrDefault("api-check", "true"))) {
      Path file = Path.of(args.get("api"));
      String command = args.getOrDefault("update-command", "-Dyarpc.api.update=true");
      String expected = header(module, command) + api.render();
      if (Boolean.parseBoolean(args.getOrDefault("update", "false"))) {
        Files.createDirectories(file.toAbsolutePath().getParent());
        Files.writeString(file, expected, StandardCharsets.UTF_8);
        System.out.println("[api-check] " + module + ": wrote " + file);
      } else if (!Files.exists(file)) {
        problems.add("no API file " + file + "; create it with: " + command);
      } else {
        String actual = Files.readString(file, StandardCharsets.UTF_8);
        if (!actual.equals(expected)) {
          problems.add("the public API differs from " + file + " (- file, + compiled classes):\n"
              + diff(body(actual), body(expected))
              + "\nIf the change is deliberate, regenerate the file and commit it with the change: "
              + command);
        }
      }
    }

    if (!problems.isEmpty()) {
      System.err.println("[api-check] " + module + " FAILED:");
      for (String p : problems) {
        System.err.println("  - " + p.replace("\n", "\n    "));
      }
      System.exit(1);
    }
    System.out.println("[api-check] " + module + ": API, internal packages and module name OK");
  }

  private static String header(String module, String command) {
    return "# Public API of " + module + ", checked by tools/ApiCheck.java in `mvn verify`.\n"
        + "# Generated: do not edit. After a deliberate API change run\n"
        + "#   " + command + "\n"
        + "# and commit this file with the change (CONTRIBUTING.md, \"API check\").\n\n";
  }

  private static List<String> body(String text) {
    List<String> lines = new ArrayList<>();
    for (String line : text.split("\n", -1)) {
      if (!line.startsWith("#")) {
        lines.add(line);
      }
    }
    return lines;
  }

  private static void checkModuleName(Path jar, String expected, List<String> problems) throws IOException {
    if (!Files.exists(jar)) {
      problems.add("no jar at " + jar + " to check its Automatic-Module-Name");
      return;
    }
    try (JarFile jf = new JarFile(jar.toFile())) {
      Manifest m = jf.getManifest();
      String actual = m == null ? null : m.getMainAttributes().getValue("Automatic-Module-Name");
      if (!expected.equals(actual)) {
        problems.add(jar.getFileName() + ": Automatic-Module-Name is " + actual + ", expected " + expected
            + " (set the yarpc.module.name property in the module's pom)");
      }
    }
  }

  /** The difference of two API texts, class by class: types and members only in one of them. */
  static String diff(List<String> oldLines, List<String> newLines) {
    Map<String, List<String>> before = blocks(oldLines);
    Map<String, List<String>> after = blocks(newLines);
    Set<String> names = new java.util.TreeSet<>(before.keySet());
    names.addAll(after.keySet());
    StringBuilder out = new StringBuilder();
    for (String name : names) {
      List<String> a = before.get(name);
      List<String> b = after.get(name);
      if (a == null || b == null) {
        for (String line : a == null ? b : a) {
          out.append(a == null ? "+ " : "- ").append(line).append('\n');
        }
        continue;
      }
      if (a.equals(b)) {
        continue;
      }
      if (a.get(0).equals(b.get(0))) {
        out.append("  ").append(a.get(0)).append('\n');
      } else {
        out.append("- ").append(a.get(0)).append('\n').append("+ ").append(b.get(0)).append('\n');
      }
      for (String line : a.subList(1, a.size())) {
        if (!b.contains(line)) {
          out.append("- ").append(line).append('\n');
        }
      }
      for (String line : b.subList(1, b.size())) {
        if (!a.contains(line)) {
          out.append("+ ").append(line).append('\n');
        }
      }
    }
    return out.toString().stripTrailing();
  }

  /** The API text's types by name: the header line, then the member lines. */
  private static Map<String, List<String>> blocks(List<String> lines) {
    Map<String, List<String>> blocks = new LinkedHashMap<>();
    List<String> current = null;
    for (String line : lines) {
      if (line.isBlank()) {
        continue;
      }
      if (!line.startsWith(" ") || current == null) {
        current = new ArrayList<>();
        blocks.put(typeName(line), current);
      }
      current.add(line);
    }
    return blocks;
  }

  private static String typeName(String header) {
    String[] words = header.split(" ");
    for (int i = 0; i + 1 < words.length; i++) {
      if (List.of("class", "interface", "enum", "record", "@interface").contains(words[i])) {
        String name = words[i + 1];
        int generic = name.indexOf('<');
        return generic < 0 ? name : name.substring(0, generic);
      }
    }
    return header;
  }

  // ---------------------------------------------------------------------------------------------------
  // The API model

  static final class Api {
    final Map<String, ClassFile> classes = new TreeMap<>();
    final Set<String> internalPackages = new HashSet<>();
    final Set<String> packages = new HashSet<>();

    static Api read(Path dir) throws IOException {
      Api api = new Api();
      if (!Files.isDirectory(dir)) {
        return api;
      }
      List<Path> files;
      try (Stream<Path> s = Files.walk(dir)) {
        files = s.filter(p -> p.toString().endsWith(".class")).sorted().toList();
      }
      for (Path p : files) {
        ClassFile cf;
        try (InputStream in = Files.newInputStream(p)) {
          cf = ClassFile.parse(in.readAllBytes());
        }
        String pkg = packageOf(cf.name);
        if (cf.name.endsWith("/package-info")) {
          if (cf.annotations.contains(INTERNAL)) {
            api.internalPackages.add(pkg);
          }
        } else if (!cf.name.equals("module-info")) {
          api.classes.put(cf.name, cf);
          api.packages.add(pkg);
        }
      }
      return api;
    }

    List<String> boundaryProblems() {
      List<String> problems = new ArrayList<>();
      for (String pkg : new java.util.TreeSet<>(packages)) {
        if (hasInternalSegment(pkg) && !internalPackages.contains(pkg)) {
          problems.add("package " + pkg.replace('/', '.') + " is internal by name but its package-info.java"
              + " is not annotated @io.yarpc.Internal");
        }
      }
      for (ClassFile cf : classes.values()) {
        if (!isApi(cf)) {
          continue;
        }
        for (String ref : cf.apiReferences(this)) {
          if (isInternalType(ref)) {
            problems.add("public API " + cf.name.replace('/', '.') + " exposes internal type "
                + ref.replace('/', '.') + " in a public or protected signature");
          }
        }
      }
      return problems;
    }

    boolean isInternalType(String name) {
      String pkg = packageOf(name);
      if (internalPackages.contains(pkg) || (name.startsWith("io/yarpc/") && hasInternalSegment(pkg))) {
        return true;
      }
      ClassFile cf = classes.get(name);
      while (cf != null) {
        if (cf.annotations.contains(INTERNAL)) {
          return true;
        }
        cf = cf.outer == null ? null : classes.get(cf.outer);
      }
      return false;
    }

    private final Map<String, Boolean> apiCache = new HashMap<>();

    boolean isApi(ClassFile cf) {
      Boolean cached = apiCache.get(cf.name);
      if (cached != null) {
        return cached;
      }
      boolean api;
      if (internalPackages.contains(packageOf(cf.name)) || cf.annotations.contains(INTERNAL)) {
        api = false;
      } else if (cf.isLocalOrAnonymous) {
        api = false;
      } else if (cf.outer == null) {
        api = (cf.access & ACC_PUBLIC) != 0;
      } else {
        ClassFile outer = classes.get(cf.outer);
        int flags = cf.innerAccess;
        api = outer != null && isApi(outer)
            && ((flags & ACC_PUBLIC) != 0 || ((flags & ACC_PROTECTED) != 0 && (outer.access & ACC_FINAL) == 0));
      }
      apiCache.put(cf.name, api);
      return api;
    }

    String render() {
      StringBuilder out = new StringBuilder();
      for (ClassFile cf : classes.values()) {
        if (!isApi(cf)) {
          continue;
        }
        out.append(cf.renderHeader()).append('\n');
        for (String member : cf.renderMembers()) {
          out.append("  ").append(member).append('\n');
        }
        out.append('\n');
      }
      return out.toString();
    }
  }

  static String packageOf(String internalName) {
    int slash = internalName.lastIndexOf('/');
    return slash < 0 ? "" : internalName.substring(0, slash);
  }

  static boolean hasInternalSegment(String pkg) {
    for (String segment : pkg.split("/")) {
      if (segment.equals("internal")) {
        return true;
      }
    }
    return false;
  }

  // ---------------------------------------------------------------------------------------------------
  // Class files (JVMS chapter 4), only what an API needs

  static final int ACC_PUBLIC = 0x0001;
  static final int ACC_PRIVATE = 0x0002;
  static final int ACC_PROTECTED = 0x0004;
  static final int ACC_STATIC = 0x0008;
  static final int ACC_FINAL = 0x0010;
  static final int ACC_VOLATILE_OR_BRIDGE = 0x0040;
  static final int ACC_TRANSIENT_OR_VARARGS = 0x0080;
  static final int ACC_INTERFACE = 0x0200;
  static final int ACC_ABSTRACT = 0x0400;
  static final int ACC_SYNTHETIC = 0x1000;
  static final int ACC_ANNOTATION = 0x2000;
  static final int ACC_ENUM = 0x4000;

  record Member(int access, String name, String descriptor, String signature, List<String> exceptions) {}

  static final class ClassFile {
    String name;
    int access;
    String superName;
    List<String> interfaces = new ArrayList<>();
    String signature;
    Set<String> annotations = new HashSet<>();
    List<Member> fields = new ArrayList<>();
    List<Member> methods = new ArrayList<>();
    String outer;
    int innerAccess;
    boolean isLocalOrAnonymous;

    static ClassFile parse(byte[] bytes) throws IOException {
      DataInputStream in = new DataInputStream(new ByteArrayInputStream(bytes));
      if (in.readInt() != 0xCAFEBABE) {
        throw new IOException("not a class file");
      }
      in.readUnsignedShort();
      in.readUnsignedShort();
      int count = in.readUnsignedShort();
      Object[] pool = new Object[count];
      for (int i = 1; i < count; i++) {
        int tag = in.readUnsignedByte();
        switch (tag) {
          case 1 -> pool[i] = in.readUTF();
          case 3, 4 -> in.readInt();
          case 5, 6 -> {
            in.readLong();
            i++;
          }
          case 7, 8, 16, 19, 20 -> pool[i] = new int[] {tag, in.readUnsignedShort()};
          case 9, 10, 11, 12, 17, 18 -> {
            in.readUnsignedShort();
            in.readUnsignedShort();
          }
          case 15 -> {
            in.readUnsignedByte();
            in.readUnsignedShort();
          }
          default -> throw new IOException("unknown constant pool tag " + tag);
        }
      }
      ClassFile cf = new ClassFile();
      cf.access = in.readUnsignedShort();
      cf.name = classAt(pool, in.readUnsignedShort());
      cf.superName = classAt(pool, in.readUnsignedShort());
      int interfaces = in.readUnsignedShort();
      for (int i = 0; i < interfaces; i++) {
        cf.interfaces.add(classAt(pool, in.readUnsignedShort()));
      }
      for (int kind = 0; kind < 2; kind++) {
        int members = in.readUnsignedShort();
        for (int i = 0; i < members; i++) {
          int access = in.readUnsignedShort();
          String name = (String) pool[in.readUnsignedShort()];
          String descriptor = (String) pool[in.readUnsignedShort()];
          String signature = null;
          List<String> exceptions = new ArrayList<>();
          int attributes = in.readUnsignedShort();
          for (int a = 0; a < attributes; a++) {
            String attr = (String) pool[in.readUnsignedShort()];
            byte[] data = new byte[in.readInt()];
            in.readFully(data);
            DataInputStream ad = new DataInputStream(new ByteArrayInputStream(data));
            if (attr.equals("Signature")) {
              signature = (String) pool[ad.readUnsignedShort()];
            } else if (attr.equals("Exceptions")) {
              int n = ad.readUnsignedShort();
              for (int e = 0; e < n; e++) {
                exceptions.add(classAt(pool, ad.readUnsignedShort()));
              }
            }
          }
          (kind == 0 ? cf.fields : cf.methods).add(new Member(access, name, descriptor, signature, exceptions));
        }
      }
      int attributes = in.readUnsignedShort();
      for (int a = 0; a < attributes; a++) {
        String attr = (String) pool[in.readUnsignedShort()];
        byte[] data = new byte[in.readInt()];
        in.readFully(data);
        DataInputStream ad = new DataInputStream(new ByteArrayInputStream(data));
        switch (attr) {
          case "Signature" -> cf.signature = (String) pool[ad.readUnsignedShort()];
          case "RuntimeInvisibleAnnotations", "RuntimeVisibleAnnotations" -> {
            int n = ad.readUnsignedShort();
            for (int i = 0; i < n; i++) {
              cf.annotations.add(readAnnotation(ad, pool));
            }
          }
          case "InnerClasses" -> {
            int n = ad.readUnsignedShort();
            for (int i = 0; i < n; i++) {
              String inner = classAt(pool, ad.readUnsignedShort());
              int outerIndex = ad.readUnsignedShort();
              ad.readUnsignedShort();
              int flags = ad.readUnsignedShort();
              if (cf.name.equals(inner)) {
                if (outerIndex == 0) {
                  cf.isLocalOrAnonymous = true;
                } else {
                  cf.outer = classAt(pool, outerIndex);
                  cf.innerAccess = flags;
                }
              }
            }
          }
          case "EnclosingMethod" -> cf.isLocalOrAnonymous = true;
          default -> {}
        }
      }
      return cf;
    }

    private static String classAt(Object[] pool, int index) {
      if (index == 0) {
        return null;
      }
      int[] ref = (int[]) pool[index];
      return (String) pool[ref[1]];
    }

    /** Reads one annotation, returns its type's internal name, skips its elements. */
    private static String readAnnotation(DataInputStream in, Object[] pool) throws IOException {
      String type = (String) pool[in.readUnsignedShort()];
      int pairs = in.readUnsignedShort();
      for (int i = 0; i < pairs; i++) {
        in.readUnsignedShort();
        skipElementValue(in, pool);
      }
      return type.substring(1, type.length() - 1); // Lio/yarpc/Internal; -> io/yarpc/Internal
    }

    private static void skipElementValue(DataInputStream in, Object[] pool) throws IOException {
      int tag = in.readUnsignedByte();
      switch (tag) {
        case 'e' -> {
          in.readUnsignedShort();
          in.readUnsignedShort();
        }
        case '@' -> readAnnotation(in, pool);
        case '[' -> {
          int n = in.readUnsignedShort();
          for (int i = 0; i < n; i++) {
            skipElementValue(in, pool);
          }
        }
        default -> in.readUnsignedShort(); // constants, strings, classes
      }
    }

    boolean isInterface() {
      return (access & ACC_INTERFACE) != 0;
    }

    int effectiveAccess() {
      return outer == null ? access : innerAccess | (access & (ACC_INTERFACE | ACC_ANNOTATION | ACC_ENUM));
    }

    boolean exposes(int memberAccess) {
      if ((memberAccess & ACC_SYNTHETIC) != 0) {
        return false;
      }
      if ((memberAccess & ACC_PUBLIC) != 0) {
        return true;
      }
      return (memberAccess & ACC_PROTECTED) != 0 && (effectiveAccess() & ACC_FINAL) == 0;
    }

    String renderHeader() {
      int flags = effectiveAccess();
      StringBuilder s = new StringBuilder();
      s.append((flags & ACC_PUBLIC) != 0 ? "public " : "protected ");
      if (outer != null && (flags & ACC_STATIC) != 0 && !isInterface() && (flags & ACC_ENUM) == 0
          && !"java/lang/Record".equals(superName)) {
        s.append("static ");
      }
      String kind;
      if ((flags & ACC_ANNOTATION) != 0) {
        kind = "@interface";
      } else if (isInterface()) {
        kind = "interface";
      } else if ((flags & ACC_ENUM) != 0) {
        kind = "enum";
      } else if ("java/lang/Record".equals(superName)) {
        kind = "record";
      } else {
        kind = "class";
        if ((flags & ACC_ABSTRACT) != 0) {
          s.append("abstract ");
        }
        if ((flags & ACC_FINAL) != 0) {
          s.append("final ");
        }
      }
      s.append(kind).append(' ').append(javaName(name));
      Signatures.ClassSig sig = signature != null
          ? new Signatures(signature).classSignature()
          : Signatures.ClassSig.of(superName, interfaces);
      s.append(sig.typeParameters());
      List<String> supers = new ArrayList<>();
      if (!isInterface() && sig.superclass() != null && !kind.equals("enum") && !kind.equals("record")
          && !sig.superclass().equals("java.lang.Object")) {
        s.append(" extends ").append(sig.superclass());
      }
      for (String i : sig.interfaces()) {
        if (!(kind.equals("@interface") && i.equals("java.lang.annotation.Annotation"))) {
          supers.add(i);
        }
      }
      if (!supers.isEmpty()) {
        s.append(isInterface() ? " extends " : " implements ").append(String.join(", ", supers));
      }
      return s.toString();
    }

    List<String> renderMembers() {
      List<String> fieldLines = new ArrayList<>();
      for (Member f : fields) {
        if (!exposes(f.access())) {
          continue;
        }
        String type = new Signatures(f.signature() != null ? f.signature() : f.descriptor()).typeSignature();
        fieldLines.add(modifiers(f.access(), false) + type + " " + f.name());
      }
      fieldLines.sort(null);
      Map<String, List<String>> methodLines = new TreeMap<>();
      for (Member m : methods) {
        if (!exposes(m.access()) || (m.access() & ACC_VOLATILE_OR_BRIDGE) != 0 || m.name().equals("<clinit>")) {
          continue;
        }
        Signatures.MethodSig sig = new Signatures(m.signature() != null ? m.signature() : m.descriptor())
            .methodSignature();
        StringBuilder s = new StringBuilder(modifiers(m.access(), true));
        if (!sig.typeParameters().isEmpty()) {
          s.append(sig.typeParameters()).append(' ');
        }
        String simple = javaName(name);
        simple = simple.substring(simple.lastIndexOf('.') + 1);
        boolean constructor = m.name().equals("<init>");
        if (!constructor) {
          s.append(sig.returnType()).append(' ');
        }
        s.append(constructor ? simple : m.name()).append('(');
        List<String> params = new ArrayList<>(sig.parameters());
        if ((m.access() & ACC_TRANSIENT_OR_VARARGS) != 0 && !params.isEmpty()) {
          String last = params.get(params.size() - 1);
          params.set(params.size() - 1, last.substring(0, last.length() - 2) + "...");
        }
        s.append(String.join(", ", params)).append(')');
        List<String> throwsList = !sig.exceptions().isEmpty()
            ? sig.exceptions()
            : m.exceptions().stream().map(ApiCheck::javaName).toList();
        if (!throwsList.isEmpty()) {
          s.append(" throws ").append(String.join(", ", throwsList));
        }
        methodLines.computeIfAbsent(constructor ? "" : m.name(), k -> new ArrayList<>()).add(s.toString());
      }
      List<String> out = new ArrayList<>(fieldLines);
      for (List<String> group : methodLines.values()) {
        group.sort(null);
        out.addAll(group);
      }
      return out;
    }

    private String modifiers(int memberAccess, boolean method) {
      StringBuilder s = new StringBuilder((memberAccess & ACC_PUBLIC) != 0 ? "public " : "protected ");
      if ((memberAccess & ACC_STATIC) != 0) {
        s.append("static ");
      }
      if (method && isInterface()) {
        if ((memberAccess & (ACC_STATIC | ACC_ABSTRACT)) == 0) {
          s.append("default ");
        }
        return s.toString();
      }
      if ((memberAccess & ACC_ABSTRACT) != 0) {
        s.append("abstract ");
      }
      if ((memberAccess & ACC_FINAL) != 0 && !(method && (effectiveAccess() & ACC_FINAL) != 0)) {
        s.append("final ");
      }
      return s.toString();
    }

    /** Every class named by this type's API: supertypes and exposed member signatures. */
    Set<String> apiReferences(Api api) {
      Set<String> refs = new HashSet<>();
      if (superName != null) {
        refs.add(superName);
      }
      refs.addAll(interfaces);
      if (signature != null) {
        refs.addAll(Signatures.classNames(signature));
      }
      for (Member f : fields) {
        if (exposes(f.access())) {
          refs.addAll(Signatures.classNames(f.descriptor()));
          if (f.signature() != null) {
            refs.addAll(Signatures.classNames(f.signature()));
          }
        }
      }
      for (Member m : methods) {
        if (exposes(m.access()) && (m.access() & ACC_VOLATILE_OR_BRIDGE) == 0) {
          refs.addAll(Signatures.classNames(m.descriptor()));
          if (m.signature() != null) {
            refs.addAll(Signatures.classNames(m.signature()));
          }
          refs.addAll(m.exceptions());
        }
      }
      refs.remove(name);
      return refs;
    }
  }

  static String javaName(String internalName) {
    return internalName.replace('/', '.').replace('$', '.');
  }

  // ---------------------------------------------------------------------------------------------------
  // Descriptors and generic signatures (JVMS 4.3, 4.7.9.1) rendered as Java source types

  static final class Signatures {
    record ClassSig(String typeParameters, String superclass, List<String> interfaces) {
      static ClassSig of(String superName, List<String> interfaces) {
        return new ClassSig("", superName == null ? null : javaName(superName),
            interfaces.stream().map(ApiCheck::javaName).toList());
      }
    }

    record MethodSig(String typeParameters, List<String> parameters, String returnType, List<String> exceptions) {}

    private final String s;
    private int i;
    private final Set<String> seen = new HashSet<>();

    Signatures(String s) {
      this.s = s;
    }

    /** Every class a descriptor or signature names (for a method: parameters, result, exceptions). */
    static Set<String> classNames(String descriptorOrSignature) {
      Signatures p = new Signatures(descriptorOrSignature);
      if (descriptorOrSignature.startsWith("(") || descriptorOrSignature.contains(")")) {
        p.methodSignature();
      } else if (descriptorOrSignature.startsWith("<")) {
        p.classSignature();
      } else {
        p.typeSignature();
        while (p.i < p.s.length()) {
          p.typeSignature(); // a class signature without type parameters: superclass, interfaces
        }
      }
      return p.seen;
    }

    ClassSig classSignature() {
      String params = typeParameters();
      String superclass = typeSignature();
      List<String> interfaces = new ArrayList<>();
      while (i < s.length()) {
        interfaces.add(typeSignature());
      }
      return new ClassSig(params, superclass, interfaces);
    }

    MethodSig methodSignature() {
      String params = typeParameters();
      expect('(');
      List<String> parameters = new ArrayList<>();
      while (s.charAt(i) != ')') {
        parameters.add(typeSignature());
      }
      expect(')');
      String ret = typeSignature();
      List<String> exceptions = new ArrayList<>();
      while (i < s.length() && s.charAt(i) == '^') {
        i++;
        exceptions.add(typeSignature());
      }
      return new MethodSig(params, parameters, ret, exceptions);
    }

    String typeParameters() {
      if (i >= s.length() || s.charAt(i) != '<') {
        return "";
      }
      i++;
      List<String> params = new ArrayList<>();
      while (s.charAt(i) != '>') {
        int colon = s.indexOf(':', i);
        String name = s.substring(i, colon);
        i = colon;
        List<String> bounds = new ArrayList<>();
        while (s.charAt(i) == ':') {
          i++;
          if (s.charAt(i) != ':' && s.charAt(i) != '>') {
            String bound = typeSignature();
            if (!bound.equals("java.lang.Object")) {
              bounds.add(bound);
            }
          }
        }
        params.add(bounds.isEmpty() ? name : name + " extends " + String.join(" & ", bounds));
      }
      i++;
      return "<" + String.join(", ", params) + ">";
    }

    String typeSignature() {
      char c = s.charAt(i++);
      switch (c) {
        case 'B': return "byte";
        case 'C': return "char";
        case 'D': return "double";
        case 'F': return "float";
        case 'I': return "int";
        case 'J': return "long";
        case 'S': return "short";
        case 'Z': return "boolean";
        case 'V': return "void";
        case '[': return typeSignature() + "[]";
        case 'T': {
          int end = s.indexOf(';', i);
          String name = s.substring(i, end);
          i = end + 1;
          return name;
        }
        case 'L': {
          StringBuilder out = new StringBuilder();
          StringBuilder raw = new StringBuilder();
          int start = i;
          while (true) {
            char d = s.charAt(i);
            if (d == '<') {
              raw.append(s, start, i);
              out.append(javaName(s.substring(start, i)));
              out.append(typeArguments());
              start = i;
            } else if (d == '.') {
              raw.append(s, start, i).append('$');
              out.append(javaName(s.substring(start, i))).append('.');
              i++;
              start = i;
            } else if (d == ';') {
              raw.append(s, start, i);
              out.append(javaName(s.substring(start, i)));
              i++;
              seen.add(raw.toString());
              return out.toString();
            } else {
              i++;
            }
          }
        }
        default:
          throw new IllegalArgumentException("bad signature " + s + " at " + (i - 1));
      }
    }

    private String typeArguments() {
      expect('<');
      List<String> args = new ArrayList<>();
      while (s.charAt(i) != '>') {
        char c = s.charAt(i);
        if (c == '*') {
          i++;
          args.add("?");
        } else if (c == '+') {
          i++;
          args.add("? extends " + typeSignature());
        } else if (c == '-') {
          i++;
          args.add("? super " + typeSignature());
        } else {
          args.add(typeSignature());
        }
      }
      i++;
      return "<" + String.join(", ", args) + ">";
    }

    private void expect(char c) {
      if (s.charAt(i) != c) {
        throw new IllegalArgumentException("bad signature " + s + " at " + i + ": expected " + c);
      }
      i++;
    }
  }

  private ApiCheck() {}
}
